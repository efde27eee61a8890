package mcptest

import (
	"context"
	"sort"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Policy is a row of a server's expected policy table: the hints and the
// gate as Gate.String() writes it, which is also the README's
// Confirmation column ("never", "always", "always; bound to `records`", a
// conditional gate's condition).
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

// Tools lists the tools the session sees.
func Tools(t testing.TB, s *Session) []*mcp.Tool {
	t.Helper()
	res, err := s.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// ToolNames lists the names of the tools the session sees, sorted.
func ToolNames(t testing.TB, s *Session) []string {
	t.Helper()
	var names []string
	for _, tool := range Tools(t, s) {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

// CheckAnnotations fails unless every advertised tool states all four
// hints and they are the table's.
func CheckAnnotations(t testing.TB, s *Session, table map[string]Policy) {
	t.Helper()
	for _, tool := range Tools(t, s) {
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations not all stated: %+v", tool.Name, a)
			continue
		}
		want := table[tool.Name]
		got := Policy{ReadOnly: a.ReadOnlyHint, Destructive: *a.DestructiveHint, Idempotent: a.IdempotentHint, OpenWorld: *a.OpenWorldHint, Gate: want.Gate}
		if got != want {
			t.Errorf("%s: advertised %+v, want %+v", tool.Name, got, want)
		}
	}
}
