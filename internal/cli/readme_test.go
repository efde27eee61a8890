package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/tooltable"
	dnssrv "github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
	rustpadsrv "github.com/bulwarkmcp/bulwark/servers/rustpad"
	vdbsrv "github.com/bulwarkmcp/bulwark/servers/vdb"
)

// TestEveryServersPolicyIsComplete: kernel.New refuses a tool whose policy
// leaves anything unset, so building every server's tools proves each
// states all of it.
func TestEveryServersPolicyIsComplete(t *testing.T) {
	for name, tools := range readmeTools(t) {
		if _, err := kernel.New(kernel.Info{Name: name}, tools, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// readmeTools are the tool tables the README carries, by marker name.
func readmeTools(t *testing.T) map[string][]kernel.Tool {
	lp, err := localzone.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dns, err := dnssrv.New(dnssrv.Config{}, dnssrv.Deps{Provider: lp})
	if err != nil {
		t.Fatal(err)
	}
	pad, err := rustpadsrv.New(rustpadsrv.Config{URL: "http://127.0.0.1:3030"}, rustpadsrv.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New([]byte("readme-test-master-key-0123456789abcdef"), nil)
	if err != nil {
		t.Fatal(err)
	}
	vdb, err := vdbsrv.New(vdbsrv.Config{}, vdbsrv.Deps{Sealer: sealer})
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]kernel.Tool{"dns": dns.Tools(), "rustpad": pad.Tools(), "vdb": vdb.Tools()}
}

// TestREADMEToolTables checks that each generated tool table in README.md
// matches the declarations. Regenerate with
// UPDATE_GOLDEN=1 go test ./internal/cli -run TestREADMEToolTables.
func TestREADMEToolTables(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for name, tools := range readmeTools(t) {
		begin := "<!-- BEGIN tools:" + name + " (generated from the declarations; regenerate with UPDATE_GOLDEN=1 go test ./internal/cli) -->\n"
		end := "<!-- END tools:" + name + " -->"
		i, j := strings.Index(readme, begin), strings.Index(readme, end)
		if i < 0 || j < i {
			t.Fatalf("README.md lacks the markers of the %s table:\n%s%s", name, begin, end)
		}
		want := tooltable.Markdown(tools)
		if got := readme[i+len(begin) : j]; got != want {
			if os.Getenv("UPDATE_GOLDEN") == "1" {
				readme = readme[:i+len(begin)] + want + readme[j:]
				continue
			}
			t.Errorf("the %s tool table in README.md is out of date; regenerate with UPDATE_GOLDEN=1 go test ./internal/cli", name)
		}
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" && readme != string(b) {
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
