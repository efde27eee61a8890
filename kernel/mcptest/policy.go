package mcptest

import (
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Policy is a row of a server's expected policy table: the hints and the
// gate as Gate.String() writes it ("never", "always", "always, bound to
// [records]", "conditional").
type Policy struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	Gate                                         string
}

// CheckPolicies fails unless tools are exactly the table's tools, each with
// a valid policy whose hints and gate are the row's and with a description.
// Every tier must be kernel.Open unless a row says otherwise by its absence
// from this check (servers with tiers test them on their own).
func CheckPolicies(t testing.TB, tools []kernel.Tool, table map[string]Policy) {
	t.Helper()
	if len(tools) != len(table) {
		t.Errorf("%d tools declared, %d in the table", len(tools), len(table))
	}
	for _, tool := range tools {
		want, ok := table[tool.Name()]
		if !ok {
			t.Errorf("%s: not in the table", tool.Name())
			continue
		}
		p := tool.Policy()
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", tool.Name(), err)
		}
		got := Policy{ReadOnly: p.ReadOnly == kernel.Yes, Destructive: p.Destructive == kernel.Yes,
			Idempotent: p.Idempotent == kernel.Yes, OpenWorld: p.OpenWorld == kernel.Yes, Gate: p.Confirm.String()}
		if got != want {
			t.Errorf("%s: policy %+v, want %+v", tool.Name(), got, want)
		}
		if p.Tier != kernel.Open {
			t.Errorf("%s: tier %q, want open", tool.Name(), p.Tier)
		}
		if tool.Description() == "" {
			t.Errorf("%s: no description", tool.Name())
		}
	}
}
