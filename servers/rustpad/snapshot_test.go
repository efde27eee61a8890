package rustpad_test

import (
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/tooltable"
)

const snapDir = "testdata/toolsnaps"

// TestToolSnapshots pins each tool's advertised tools/list entry
// (mcptest.ToolSnapshots). UPDATE_GOLDEN=1 rewrites the files.
func TestToolSnapshots(t *testing.T) {
	f := newFixture(t, setup{})
	mcptest.ToolSnapshots(t, f.sess, snapDir)
}

const toolDoc = "../../docs/tools-rustpad.md"

// toolDocText is docs/tools-rustpad.md: a header and the generated table.
func toolDocText(t *testing.T) string {
	return "<!-- Generated from servers/rustpad (kernel/tooltable.Markdown over Server.Tools); do not edit.\n" +
		"     Regenerate: UPDATE_GOLDEN=1 go test ./servers/rustpad -run TestToolTable -->\n\n" +
		"# `bulwark rustpad` tools\n\n" + tooltable.Markdown(declared(t)) + "\n" +
		"Every tool talks to the Rustpad instance at `RUSTPAD_URL`, and everything it returns that came from a pad " +
		"(text, user names, the language, error bodies) arrives inside an untrusted-data envelope. " +
		"Read-only mode (`RUSTPAD_READ_ONLY`) registers only the read-only tools. " +
		"Confirmation: the first call is refused with a single-use token (five minutes) bound to the pad id and " +
		"the text it holds; the second call with the same arguments and that token runs. " +
		"\"Bound to\" names the argument whose exact value the token covers besides the target. " +
		"`set_document` asks only when the pad holds text: an empty pad has nothing to lose.\n"
}

func TestToolTable(t *testing.T) {
	got := toolDocText(t)
	mcptest.GoldenFile(t, toolDoc, got)
	for name := range policyTable {
		if !strings.Contains(got, "| `"+name+"` |") {
			t.Errorf("%s missing from the table", name)
		}
	}
	contains(t, got, "| `set_document` |", "when the pad holds text; bound to `text`")
}
