package dns_test

import (
	"slices"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/hetzner"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
)

// coreOnly hides every capability of the provider it holds: embedding the
// interface type exposes only the core methods.
type coreOnly struct{ dns.Provider }

// coreTools are the tools every provider serves.
var coreTools = []string{"list_zones", "get_zone", "export_zonefile", "list_rrsets", "get_rrset", "create_rrset",
	"delete_rrset", "set_records", "add_records", "remove_records", "change_rrset_ttl"}

// TestCapabilitiesChooseTools: a provider with every capability serves
// every tool; one with the core only serves the core tools, and tools/list
// shows nothing else.
func TestCapabilitiesChooseTools(t *testing.T) {
	full := dns.ServedTools((*localzone.Provider)(nil))
	if len(full) != len(policyTable) {
		t.Fatalf("local serves %d tools, want all %d: %v", len(full), len(policyTable), full)
	}
	if got := dns.ServedTools((*hetzner.Client)(nil)); !slices.Equal(got, full) {
		t.Fatalf("hetzner serves %v, want %v", got, full)
	}
	if caps := dns.Capabilities((*localzone.Provider)(nil)); len(caps) != 7 {
		t.Fatalf("local capabilities %v", caps)
	}
	core := dns.ServedTools(coreOnly{})
	if !slices.Equal(core, coreTools) {
		t.Fatalf("core provider serves %v, want %v", core, coreTools)
	}
	if caps := dns.Capabilities(coreOnly{}); len(caps) != 0 {
		t.Fatalf("core provider capabilities %v", caps)
	}
	f := newFixture(t, backends[1], setup{before: standard(t), client: func(b backend) dns.Provider { return coreOnly{b.p} }})
	res, err := f.sess.ListTools(ctx(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tool := range res.Tools {
		listed = append(listed, tool.Name)
	}
	slices.Sort(listed)
	want := slices.Sorted(slices.Values(coreTools))
	if !slices.Equal(listed, want) {
		t.Fatalf("tools/list %v, want %v", listed, want)
	}
}

// TestNoCapabilityNoSilentDrop: labels and comments given to a provider
// that keeps none are refused, never dropped; the refusal of set_records
// comes before any token.
func TestNoCapabilityNoSilentDrop(t *testing.T) {
	f := newFixture(t, backends[1], setup{before: standard(t), client: func(b backend) dns.Provider { return coreOnly{b.p} }})
	f.fails(t, "list_zones", map[string]any{"label_selector": "env=prod"}, kernel.InvalidArgument)
	f.fails(t, "list_rrsets", map[string]any{"zone": "example.com", "label_selector": "env=prod"}, kernel.InvalidArgument)
	f.fails(t, "create_rrset", map[string]any{"zone": "example.com", "name": "new", "type": "A",
		"records": recs("198.51.100.9"), "labels": map[string]any{"env": "prod"}}, kernel.InvalidArgument)
	commented := []any{map[string]any{"value": "198.51.100.9", "comment": "mine"}}
	f.fails(t, "add_records", map[string]any{"zone": "example.com", "name": "www", "type": "A", "records": commented}, kernel.InvalidArgument)
	text := f.fails(t, "set_records", map[string]any{"zone": "example.com", "name": "www", "type": "A", "records": commented}, kernel.InvalidArgument)
	lacks(t, text, "confirmToken")
	f.ok(t, "add_records", map[string]any{"zone": "example.com", "name": "www", "type": "A", "records": recs("198.51.100.9")}, nil)
}
