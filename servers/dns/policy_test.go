package dns_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// gate kinds of the security page's table ("The tools that require one").
const (
	never       = "—"
	always      = "always"
	conditional = "conditional"
)

// policyTable is the expected policy of every tool: the security page's
// confirmation table, and honest hints (reads read-only; only the tools that
// merely add are not destructive).
var policyTable = map[string]struct {
	readOnly, destructive, idempotent bool
	gate                              string
	payload                           string // what a gated token is bound to besides the target
}{
	"list_zones":                 {true, false, true, never, ""},
	"get_zone":                   {true, false, true, never, ""},
	"export_zonefile":            {true, false, true, never, ""},
	"list_rrsets":                {true, false, true, never, ""},
	"get_rrset":                  {true, false, true, never, ""},
	"list_zone_actions":          {true, false, true, never, ""},
	"get_zone_action":            {true, false, true, never, ""},
	"create_zone":                {false, false, false, never, ""},
	"create_rrset":               {false, false, false, never, ""},
	"add_records":                {false, false, false, never, ""},
	"update_zone":                {false, true, true, never, ""},
	"change_zone_ttl":            {false, true, true, never, ""},
	"update_rrset":               {false, true, true, never, ""},
	"update_records":             {false, true, true, never, ""},
	"change_rrset_ttl":           {false, true, true, never, ""},
	"delete_zone":                {false, true, true, always, ""},
	"delete_rrset":               {false, true, true, always, ""},
	"import_zonefile":            {false, true, true, always, "zonefile"},
	"set_records":                {false, true, true, always, "records"},
	"remove_records":             {false, true, true, always, "records"},
	"change_primary_nameservers": {false, true, true, always, "primary_nameservers"},
	"change_zone_protection":     {false, true, true, conditional, ""},
	"change_rrset_protection":    {false, true, true, conditional, ""},
}

func gatedTools() []string {
	var out []string
	for name, p := range policyTable {
		if p.gate != never {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func declared(t *testing.T) []kernel.Tool {
	t.Helper()
	srv, err := dns.New(dns.Config{}, dns.Deps{Provider: newLocal(t, nil).p})
	if err != nil {
		t.Fatal(err)
	}
	return srv.Tools()
}

func TestPoliciesMatchTheSecurityPage(t *testing.T) {
	tools := declared(t)
	if len(tools) != len(policyTable) {
		t.Fatalf("%d tools declared, %d in the table", len(tools), len(policyTable))
	}
	for _, tool := range tools {
		want, ok := policyTable[tool.Name()]
		if !ok {
			t.Errorf("%s: not in the table", tool.Name())
			continue
		}
		p := tool.Policy()
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", tool.Name(), err)
		}
		if p.OpenWorld != kernel.Yes || p.Tier != kernel.Open {
			t.Errorf("%s: open world %v, tier %q", tool.Name(), p.OpenWorld, p.Tier)
		}
		got := [3]bool{p.ReadOnly == kernel.Yes, p.Destructive == kernel.Yes, p.Idempotent == kernel.Yes}
		if got != [3]bool{want.readOnly, want.destructive, want.idempotent} {
			t.Errorf("%s: read-only/destructive/idempotent %v, want %v", tool.Name(), got, [3]bool{want.readOnly, want.destructive, want.idempotent})
		}
		gate := p.Confirm.String()
		kind, _, _ := strings.Cut(gate, ",")
		if kind == "never" {
			kind = never
		}
		if kind != want.gate {
			t.Errorf("%s: gate %q, want %s", tool.Name(), gate, want.gate)
		}
		if want.payload != "" && !strings.HasSuffix(gate, "bound to ["+want.payload+"]") {
			t.Errorf("%s: gate %q, want bound to %s", tool.Name(), gate, want.payload)
		}
		if want.payload == "" && strings.Contains(gate, "bound to") {
			t.Errorf("%s: gate %q binds a payload", tool.Name(), gate)
		}
		if tool.Description() == "" {
			t.Errorf("%s: no description", tool.Name())
		}
	}
}

func listTools(t *testing.T, f *fixture) []*mcp.Tool {
	t.Helper()
	res, err := f.sess.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

func toolNames(t *testing.T, f *fixture) []string {
	var names []string
	for _, tool := range listTools(t, f) {
		names = append(names, tool.Name)
	}
	return names
}

func TestAnnotationsAllStated(t *testing.T) {
	f := newFixture(t, backends[1], setup{})
	for _, tool := range listTools(t, f) {
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Fatalf("%s: annotations %+v", tool.Name, a)
		}
		want := policyTable[tool.Name]
		if a.ReadOnlyHint != want.readOnly || *a.DestructiveHint != want.destructive || a.IdempotentHint != want.idempotent || !*a.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tool.Name, a)
		}
	}
}

func TestReadOnlyMode(t *testing.T) {
	f := newFixture(t, backends[1], setup{kopts: kernel.Options{ReadOnly: true}, before: standard(t)})
	names := toolNames(t, f)
	var want []string
	for name, p := range policyTable {
		if p.readOnly {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	sort.Strings(names)
	if !slices.Equal(names, want) {
		t.Fatalf("read-only tools %v, want %v", names, want)
	}
	_, err := f.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_zone", Arguments: map[string]any{"zone": "example.com"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "unknown tool") {
		t.Fatalf("a write tool in read-only mode: %v", err)
	}
	f.ok(t, "get_zone", map[string]any{"zone": "example.com"}, nil)
}

func TestAllowAndDenyLists(t *testing.T) {
	f := newFixture(t, backends[1], setup{kopts: kernel.Options{
		Allow: []string{"list_*", "get_*", "set_records", "delete_rrset"},
		Deny:  []string{"list_zone_actions"},
	}})
	got := strings.Join(toolNames(t, f), ",")
	want := "delete_rrset,get_rrset,get_zone,get_zone_action,list_rrsets,list_zones,set_records"
	if got != want {
		t.Fatalf("tools %s, want %s", got, want)
	}
	_, err := f.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_zone", Arguments: map[string]any{"name": "example.com", "mode": "primary"}})
	if err == nil {
		t.Fatal("a tool left out by the allow list answered")
	}
	srv, _ := dns.New(dns.Config{}, dns.Deps{Provider: newLocal(t, nil).p})
	if _, err := kernel.New(kernel.Info{Name: "x"}, srv.Tools(), &kernel.Options{ReadOnly: true, Allow: []string{"delete_zone"}}); err == nil {
		t.Fatal("an allowed write tool in read-only mode was accepted")
	}
}
