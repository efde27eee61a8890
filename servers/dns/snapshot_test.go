package dns_test

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
	f := newFixture(t, backends[1], setup{})
	mcptest.ToolSnapshots(t, f.sess, snapDir)
}

const toolDoc = "../../docs/tools-dns.md"

// toolDocText is docs/tools-dns.md: a header and the generated table.
func toolDocText(t *testing.T) string {
	return "<!-- Generated from servers/dns (kernel/tooltable.Markdown over Server.Tools); do not edit.\n" +
		"     Regenerate: UPDATE_GOLDEN=1 go test ./servers/dns -run TestToolTable -->\n\n" +
		"# `bulwark dns` tools\n\n" + tooltable.Markdown(declared(t)) + "\n" +
		"Read-only mode registers only the read-only tools. Confirmation: the first call is refused with a " +
		"single-use token (five minutes); the second call with the same arguments and that token runs. " +
		"\"Bound to\" names the argument whose exact value the token covers besides the target.\n"
}

func TestToolTable(t *testing.T) {
	got := toolDocText(t)
	mcptest.GoldenFile(t, toolDoc, got)
	for name := range policyTable {
		if !strings.Contains(got, "| `"+name+"` |") {
			t.Errorf("%s missing from the table", name)
		}
	}
	contains(t, got, "| `set_records` |", "always; bound to `records`", "only when removing protection (`delete: false`)")
}
