package tooltable_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/tooltable"
)

func tool(name, desc string, gate kernel.Gate) kernel.Tool {
	return kernel.NewTool(kernel.Spec[struct{}, map[string]int]{Name: name, Description: desc,
		Policy: kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.Yes, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: gate, Tier: kernel.Open},
		Handle: func(context.Context, *kernel.Call, struct{}) (map[string]int, error) { return nil, nil }})
}

// TestMarkdownRendersTheGateAsString: the Confirmation column is
// kernel.Gate's String, the one rendering of a gate.
func TestMarkdownRendersTheGateAsString(t *testing.T) {
	bind := kernel.Bind{Target: []string{"zone"}, Payload: []string{"records", "ttl"}}
	for _, gate := range []kernel.Gate{
		kernel.Never,
		kernel.Always(bind),
		kernel.When(func(map[string]any) bool { return true }, bind).Described("only when removing protection"),
	} {
		table := tooltable.Markdown([]kernel.Tool{tool("t", "D.", gate)})
		if !strings.Contains(table, "| no | yes | yes | "+gate.String()+" |") {
			t.Errorf("the tool table renders the gate otherwise than String:\n%s", table)
		}
	}
}

// TestMarkdownFirstSentenceEscaped: only the first sentence of a
// description, with its pipes escaped so the row keeps its columns.
func TestMarkdownFirstSentenceEscaped(t *testing.T) {
	table := tooltable.Markdown([]kernel.Tool{tool("t", "Reads a|b. Then more.", kernel.Never)})
	want := "| Tool | What it does | Read-only | Destructive | Idempotent | Confirmation |\n" +
		"|---|---|---|---|---|---|\n" +
		"| `t` | Reads a\\|b. | no | yes | yes | never |\n"
	if table != want {
		t.Fatalf("got\n%s\nwant\n%s", table, want)
	}
}
