package dns_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/tooltable"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
	"github.com/bulwarkmcp/bulwark/servers/dns/rfc2136"
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
		"\"Bound to\" names the argument whose exact value the token covers besides the target.\n\n" +
		"## Tools by provider\n\n" +
		"A provider serves the tools its protocol can (`dns.ServedTools`); the others are not registered.\n\n" +
		"| Provider | Tools |\n|---|---|\n" +
		"| `local`, `hetzner` | all " + strconv.Itoa(len(dns.ServedTools((*localzone.Provider)(nil)))) + " |\n" +
		"| `rfc2136` | `" + strings.Join(dns.ServedTools((*rfc2136.Provider)(nil)), "`, `") + "` |\n"
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
