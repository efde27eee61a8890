package dns_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// allowSetup restricts the server to example.com (spelled oddly on
// purpose) and seeds secret.org beside it.
func allowSetup(t *testing.T) setup {
	return setup{
		cfg: dns.Config{AllowZones: []string{"Example.COM."}},
		before: func(b backend) {
			standard(t)(b)
			seedZone(t, b, "secret.org")
			seedRecords(t, b, "secret.org", "www", "A", 300, dns.Record{Value: "198.51.100.99", Comment: marker})
			seedSecondary(t, b, "secondary.net")
		},
	}
}

func TestAllowlistOnEveryTool(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, allowSetup(t))
		secretID := zoneID(t, f.backend, "secret.org")
		ns := []any{map[string]any{"address": "198.51.100.54"}}
		for _, zone := range []string{"secret.org", "SECRET.org", secretID, "nope.org", "99999999"} {
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"get_zone", map[string]any{"zone": zone}},
				{"export_zonefile", map[string]any{"zone": zone}},
				{"update_zone", map[string]any{"zone": zone, "labels": map[string]any{}}},
				{"delete_zone", map[string]any{"zone": zone}},
				{"import_zonefile", map[string]any{"zone": zone, "zonefile": "x"}},
				{"change_zone_ttl", map[string]any{"zone": zone, "ttl": 600}},
				{"change_zone_protection", map[string]any{"zone": zone, "delete": true}},
				{"change_zone_protection", map[string]any{"zone": zone, "delete": false}},
				{"change_primary_nameservers", map[string]any{"zone": zone, "primary_nameservers": ns}},
				{"list_rrsets", map[string]any{"zone": zone}},
				{"get_rrset", rrsetArgs(zone, "www", "A")},
				{"create_rrset", rrsetArgs(zone, "new", "A", "records", recs("198.51.100.9"))},
				{"update_rrset", rrsetArgs(zone, "www", "A", "labels", map[string]any{})},
				{"delete_rrset", rrsetArgs(zone, "www", "A")},
				{"set_records", rrsetArgs(zone, "www", "A", "records", recs("198.51.100.9"))},
				{"add_records", rrsetArgs(zone, "www", "A", "records", recs("198.51.100.9"))},
				{"remove_records", rrsetArgs(zone, "www", "A", "records", recs("198.51.100.99"))},
				{"update_records", rrsetArgs(zone, "www", "A", "records", recs("198.51.100.99"))},
				{"change_rrset_ttl", rrsetArgs(zone, "www", "A", "ttl", 600)},
				{"change_rrset_protection", rrsetArgs(zone, "www", "A", "change", false)},
				{"list_zone_actions", map[string]any{"zone": zone}},
			}
			for _, c := range calls {
				text := f.fails(t, c.tool, c.args, kernel.PermissionDenied)
				// One message whether the zone exists or not: nothing to probe.
				contains(t, text, "Zone "+quote(zone)+" is not available to this server: it does not exist, or the server may not use it.")
				lacks(t, text, marker, "198.51.100.99")
				if zone == secretID {
					lacks(t, text, "secret.org")
				}
			}
		}
		if got := getRRSet(t, f, "example.com", "www", "A"); len(got.Records) != 2 {
			t.Fatalf("allowed zone changed: %+v", got)
		}
		secret, _ := f.p.GetRRSet(ctx(), "secret.org", "www", "A")
		if len(secret.Records) != 1 || secret.Protection.Change {
			t.Fatalf("a refused call changed secret.org: %+v", secret)
		}

		// The allowed zone works by name (any spelling) and by id.
		getZone(t, f, "example.com") // the list says "Example.COM."
		getZone(t, f, zoneID(t, f.backend, "example.com"))
		f.ok(t, "list_rrsets", map[string]any{"zone": "example.com"}, nil)
	})
}

func quote(s string) string { return `"` + s + `"` }

func TestAllowlistLists(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, allowSetup(t))
		var zones dns.ZoneList
		text := f.ok(t, "list_zones", map[string]any{}, &zones)
		if len(zones.Zones) != 1 || zones.Zones[0].Name != "example.com" {
			t.Fatalf("zones %+v", zones.Zones)
		}
		lacks(t, text, "secret.org", "secondary.net")
		f.ok(t, "list_zones", map[string]any{"name": "secret.org"}, &zones)
		if len(zones.Zones) != 0 {
			t.Fatalf("name filter let secret.org through: %+v", zones.Zones)
		}

		text = f.fails(t, "list_zone_actions", map[string]any{}, kernel.InvalidArgument)
		contains(t, text, "name a zone")
		var actions dns.ActionList
		f.ok(t, "list_zone_actions", map[string]any{"zone": "example.com"}, &actions)
		if len(actions.Actions) == 0 {
			t.Fatal("no actions of the allowed zone")
		}
		f.ok(t, "get_zone_action", map[string]any{"action_id": actions.Actions[0].ID}, nil)

		secretActions, err := f.p.ListActions(ctx(), dns.ListActionsOptions{Zone: "secret.org"})
		if err != nil || len(secretActions.Actions) == 0 {
			t.Fatalf("secret actions: %v %v", secretActions, err)
		}
		text = f.fails(t, "get_zone_action", map[string]any{"action_id": secretActions.Actions[0].ID}, kernel.PermissionDenied)
		lacks(t, text, "secret.org")
		f.fails(t, "get_zone_action", map[string]any{"action_id": 987654321}, kernel.PermissionDenied)
	})
}

func TestAllowlistCreateAndDelete(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		su := allowSetup(t)
		su.cfg.AllowZones = append(su.cfg.AllowZones, "new.org")
		f := newFixture(t, mk, su)
		f.fails(t, "create_zone", map[string]any{"name": "other.org", "mode": "primary"}, kernel.PermissionDenied)
		f.ok(t, "create_zone", map[string]any{"name": "new.org", "mode": "primary"}, nil)

		// The delete action of an allowed zone stays readable once the
		// zone is gone.
		var done struct{ Action dns.Action }
		f.confirmed(t, "delete_zone", map[string]any{"zone": "new.org"}, &done)
		f.ok(t, "get_zone_action", map[string]any{"action_id": done.Action.ID}, nil)
	})
}

// A name outside the list is refused before any request is made.
func TestAllowlistRefusesBeforeAsking(t *testing.T) {
	f := newFixture(t, hetznerOnly(t), allowSetup(t))
	f.fake.ResetRequests()
	f.fails(t, "get_rrset", rrsetArgs("secret.org", "www", "A"), kernel.PermissionDenied)
	f.fails(t, "create_zone", map[string]any{"name": "other.org", "mode": "primary"}, kernel.PermissionDenied)
	for _, r := range f.fake.Requests() {
		if strings.Contains(r.Path, "secret") || r.Method != "GET" {
			t.Fatalf("request made for a refused zone: %s %s", r.Method, r.Path)
		}
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Fatalf("%d requests", n)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []dns.Config{
		{AllowZones: []string{"a/b"}},
		{AllowZones: []string{".."}},
		{AllowZones: []string{""}},
		{ActionWait: -1},
		{ActionPoll: -1},
		{ActionPoll: 1},
		{ActionWait: 24 * 60 * 60 * 1e9},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("accepted %+v", c)
		}
		if _, err := dns.New(c, dns.Deps{Provider: newLocal(t, nil).p}); err == nil {
			t.Errorf("New accepted %+v", c)
		}
	}
	if err := (dns.Config{AllowZones: []string{"Example.com."}}).Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := dns.New(dns.Config{}, dns.Deps{}); err == nil {
		t.Fatal("New without a provider")
	}
}

// TestAllowlistCountsOnlyVisibleZones: under the allowlist, list_zones'
// counts and paging describe only the zones the server may use. Filtering
// by a hidden zone's name answers exactly as for a zone that does not
// exist, and total_entries never counts hidden zones (issue 10.18).
func TestAllowlistCountsOnlyVisibleZones(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		su := allowSetup(t)
		su.cfg.AllowZones = append(su.cfg.AllowZones, "allowed-b.com", "missing-allowed.com")
		before := su.before
		su.before = func(b backend) {
			before(b)
			seedZone(t, b, "allowed-b.com")
			for _, z := range []string{"hidden1.org", "hidden2.org", "hidden3.org"} {
				seedZone(t, b, z)
			}
		}
		f := newFixture(t, mk, su)
		list := func(args map[string]any) dns.ZoneList {
			t.Helper()
			var zl dns.ZoneList
			f.ok(t, "list_zones", args, &zl)
			return zl
		}
		hidden, missing := list(map[string]any{"name": "secret.org"}), list(map[string]any{"name": "nope.org"})
		if *hidden.Pagination.TotalEntries != 0 || !equalJSON(t, hidden, missing) {
			t.Errorf("a hidden name answers differently from a missing one:\n%+v\n%+v", hidden, missing)
		}
		all := list(map[string]any{})
		if len(all.Zones) != 2 || *all.Pagination.TotalEntries != 2 || *all.Pagination.LastPage != 1 || all.Pagination.NextPage != nil {
			t.Errorf("list_zones counts hidden zones: %d zones, pagination %+v", len(all.Zones), all.Pagination)
		}
		p1 := list(map[string]any{"per_page": 1, "sort": []any{"name:desc"}})
		p2 := list(map[string]any{"per_page": 1, "page": 2, "sort": []any{"name:desc"}})
		if len(p1.Zones) != 1 || p1.Zones[0].Name != "example.com" || len(p2.Zones) != 1 || p2.Zones[0].Name != "allowed-b.com" ||
			*p2.Pagination.LastPage != 2 || p2.Pagination.NextPage != nil {
			t.Errorf("paging over visible zones: %+v / %+v", p1, p2)
		}
		if sec := list(map[string]any{"mode": "secondary"}); *sec.Pagination.TotalEntries != 0 {
			t.Errorf("mode filter counts the hidden secondary zone: %+v", sec.Pagination)
		}
	})
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(ja) == string(jb)
}
