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
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// policyTable is the expected policy of every tool: the security page's
// confirmation table, and honest hints (reads read-only; only the tools that
// merely add are not destructive; every tool talks to the provider).
var policyTable = map[string]mcptest.Policy{
	"list_zones":                 {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"get_zone":                   {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"export_zonefile":            {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"list_rrsets":                {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"get_rrset":                  {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"list_zone_actions":          {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"get_zone_action":            {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"create_zone":                {ReadOnly: false, Destructive: false, Idempotent: false, OpenWorld: true, Gate: "never"},
	"create_rrset":               {ReadOnly: false, Destructive: false, Idempotent: false, OpenWorld: true, Gate: "never"},
	"add_records":                {ReadOnly: false, Destructive: false, Idempotent: false, OpenWorld: true, Gate: "never"},
	"update_zone":                {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "never"},
	"change_zone_ttl":            {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "never"},
	"update_rrset":               {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "never"},
	"update_records":             {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "never"},
	"change_rrset_ttl":           {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "never"},
	"delete_zone":                {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "always"},
	"delete_rrset":               {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "always"},
	"import_zonefile":            {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "always; bound to `zonefile`"},
	"set_records":                {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "always; bound to `records`"},
	"remove_records":             {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "always; bound to `records`"},
	"change_primary_nameservers": {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "always; bound to `primary_nameservers`"},
	"change_zone_protection":     {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "only when removing protection (`delete: false`)"},
	"change_rrset_protection":    {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "only when removing protection (`change: false`)"},
}

func gatedTools() []string {
	var out []string
	for name, p := range policyTable {
		if p.Gate != "never" {
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
	mcptest.CheckPolicies(t, declared(t), policyTable)
}

func listTools(t *testing.T, f *fixture) []*mcp.Tool { return mcptest.Tools(t, f.sess) }

func toolNames(t *testing.T, f *fixture) []string { return mcptest.ToolNames(t, f.sess) }

func TestAnnotationsAllStated(t *testing.T) {
	mcptest.CheckAnnotations(t, newFixture(t, backends[1], setup{}).sess, policyTable)
}

func TestReadOnlyMode(t *testing.T) {
	f := newFixture(t, backends[1], setup{kopts: kernel.Options{ReadOnly: true}, before: standard(t)})
	names := toolNames(t, f)
	var want []string
	for name, p := range policyTable {
		if p.ReadOnly {
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
