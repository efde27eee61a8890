package dns_test

import (
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// Success paths of every tool, on every provider.

func TestReadTools(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: standard(t)})

		var zones dns.ZoneList
		f.ok(t, "list_zones", map[string]any{"sort": []any{"name:desc"}, "per_page": 10}, &zones)
		if len(zones.Zones) != 1 || zones.Zones[0].Name != "example.com" {
			t.Fatalf("zones %+v", zones)
		}
		f.ok(t, "list_zones", map[string]any{"name": "example.com", "mode": "primary"}, &zones)
		if len(zones.Zones) != 1 {
			t.Fatalf("name filter: %+v", zones)
		}

		var z struct{ Zone dns.Zone }
		f.ok(t, "get_zone", map[string]any{"zone": "example.com"}, &z)
		if z.Zone.Name != "example.com" || z.Zone.Mode != dns.ModePrimary {
			t.Fatalf("zone %+v", z.Zone)
		}
		var byID struct{ Zone dns.Zone }
		f.ok(t, "get_zone", map[string]any{"zone": formatID(z.Zone.ID)}, &byID)
		if byID.Zone.Name != "example.com" {
			t.Fatalf("by id %+v", byID.Zone)
		}

		text := f.ok(t, "export_zonefile", map[string]any{"zone": "example.com"}, nil)
		contains(t, text, `<untrusted-data source="`+sourceOf(mk.name)+`">`, "198.51.100.1", "v=spf1 -all", "SOA")

		var list dns.RRSetList
		f.ok(t, "list_rrsets", map[string]any{"zone": "example.com", "type": []any{"A", "TXT"}, "sort": []any{"name"}}, &list)
		if len(list.RRSets) != 2 {
			t.Fatalf("rrsets %+v", list.RRSets)
		}
		f.ok(t, "list_rrsets", map[string]any{"zone": "example.com", "name": "@"}, &list)
		for _, rs := range list.RRSets {
			if rs.Name != "@" {
				t.Fatalf("name filter gave %s", rs.ID)
			}
		}

		var rs struct{ RRSet dns.RRSet }
		f.ok(t, "get_rrset", map[string]any{"zone": "example.com", "name": "www", "type": "A"}, &rs)
		if len(rs.RRSet.Records) != 2 || rs.RRSet.TTL == nil || *rs.RRSet.TTL != 300 {
			t.Fatalf("rrset %+v", rs.RRSet)
		}
		f.ok(t, "get_rrset", map[string]any{"zone": "example.com", "name": "@", "type": "TXT"}, &rs)

		var actions dns.ActionList
		f.ok(t, "list_zone_actions", map[string]any{"zone": "example.com", "status": []any{"success"}, "sort": []any{"id:desc"}}, &actions)
		if len(actions.Actions) == 0 {
			t.Fatal("no actions listed")
		}
		f.ok(t, "list_zone_actions", map[string]any{}, &actions)
		var a struct{ Action dns.Action }
		f.ok(t, "get_zone_action", map[string]any{"action_id": actions.Actions[0].ID}, &a)
		if a.Action.ID != actions.Actions[0].ID || a.Action.Status != dns.ActionSuccess {
			t.Fatalf("action %+v", a.Action)
		}
	})
}

func sourceOf(provider string) string {
	if provider == "hetzner" {
		return "hetzner-cloud-api"
	}
	return "local-zone-store"
}

func TestZoneWriteTools(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{})

		var created struct {
			Zone   dns.Zone
			Action *dns.Action
		}
		f.ok(t, "create_zone", map[string]any{"name": "example.org", "mode": "primary", "ttl": 7200, "labels": map[string]any{"env": "test"}}, &created)
		if created.Zone.Name != "example.org" || created.Action == nil || created.Action.Status != dns.ActionSuccess {
			t.Fatalf("created %+v", created)
		}

		var z struct{ Zone dns.Zone }
		f.ok(t, "update_zone", map[string]any{"zone": "example.org", "labels": map[string]any{"team": "dns"}}, &z)
		if len(z.Zone.Labels) != 1 || z.Zone.Labels["team"] != "dns" {
			t.Fatalf("labels %+v", z.Zone.Labels)
		}

		var done struct{ Action dns.Action }
		f.ok(t, "change_zone_ttl", map[string]any{"zone": "example.org", "ttl": 600}, &done)
		if done.Action.Status != dns.ActionSuccess {
			t.Fatalf("change_zone_ttl %+v", done)
		}
		if got := getZone(t, f, "example.org"); got.TTL != 600 {
			t.Fatalf("ttl %d", got.TTL)
		}

		f.ok(t, "change_zone_protection", map[string]any{"zone": "example.org", "delete": true}, &done)
		if !getZone(t, f, "example.org").Protection.Delete {
			t.Fatal("protection not on")
		}
		f.confirmed(t, "change_zone_protection", map[string]any{"zone": "example.org", "delete": false}, &done)
		if getZone(t, f, "example.org").Protection.Delete {
			t.Fatal("protection not off")
		}

		zonefile := f.ok(t, "export_zonefile", map[string]any{"zone": "example.org"}, nil)
		body := zonefileBody(t, zonefile) + "imported 300 IN A 198.51.100.9\n"
		f.confirmed(t, "import_zonefile", map[string]any{"zone": "example.org", "zonefile": body}, &done)
		var rs struct{ RRSet dns.RRSet }
		f.ok(t, "get_rrset", map[string]any{"zone": "example.org", "name": "imported", "type": "A"}, &rs)

		f.ok(t, "create_zone", map[string]any{"name": "example.net", "mode": "secondary",
			"primary_nameservers": []any{map[string]any{"address": "198.51.100.53", "port": 53}}}, &created)
		f.confirmed(t, "change_primary_nameservers", map[string]any{"zone": "example.net",
			"primary_nameservers": []any{map[string]any{"address": "198.51.100.54", "tsig_key": "c2VjcmV0", "tsig_algorithm": "hmac-sha256"}}}, &done)
		text := f.ok(t, "get_zone", map[string]any{"zone": "example.net"}, &z)
		contains(t, text, "198.51.100.54", "[redacted]")
		lacks(t, text, "c2VjcmV0")

		f.confirmed(t, "delete_zone", map[string]any{"zone": "example.org"}, &done)
		f.fails(t, "get_zone", map[string]any{"zone": "example.org"}, "not_found")
	})
}

// zonefileBody takes the zone file out of an export's envelope.
func zonefileBody(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "\">\n")
	body, _, ok2 := strings.Cut(rest, "</untrusted-data>")
	if !ok || !ok2 {
		t.Fatalf("no envelope: %s", text)
	}
	return body
}

func getZone(t *testing.T, f *fixture, zone string) dns.Zone {
	t.Helper()
	var z struct{ Zone dns.Zone }
	f.ok(t, "get_zone", map[string]any{"zone": zone}, &z)
	return z.Zone
}

func getRRSet(t *testing.T, f *fixture, zone, name, typ string) dns.RRSet {
	t.Helper()
	var rs struct{ RRSet dns.RRSet }
	f.ok(t, "get_rrset", map[string]any{"zone": zone, "name": name, "type": typ}, &rs)
	return rs.RRSet
}

func values(rs dns.RRSet) string {
	var v []string
	for _, r := range rs.Records {
		v = append(v, r.Value)
	}
	return strings.Join(v, ",")
}

func TestRRSetWriteTools(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: standard(t)})
		www := map[string]any{"zone": "example.com", "name": "www", "type": "A"}

		var created struct {
			RRSet  dns.RRSet
			Action *dns.Action
		}
		f.ok(t, "create_rrset", map[string]any{"zone": "example.com", "name": "api", "type": "AAAA", "ttl": 120,
			"records": []any{map[string]any{"value": "2001:db8::1", "comment": "api"}}, "labels": map[string]any{"svc": "api"}}, &created)
		if created.RRSet.ID != "api/AAAA" {
			t.Fatalf("created %+v", created)
		}
		f.ok(t, "create_rrset", map[string]any{"zone": "example.com", "name": "*", "type": "A", "records": recs("198.51.100.77")}, nil)
		if got := getRRSet(t, f, "example.com", "*", "A"); values(got) != "198.51.100.77" {
			t.Fatalf("wildcard %+v", got)
		}

		var rs struct{ RRSet dns.RRSet }
		f.ok(t, "update_rrset", with(www, "labels", map[string]any{"role": "web"}), &rs)
		if rs.RRSet.Labels["role"] != "web" {
			t.Fatalf("labels %+v", rs.RRSet.Labels)
		}

		var done struct{ Action dns.Action }
		f.ok(t, "add_records", with(www, "records", recs("198.51.100.3")), &done)
		if got := getRRSet(t, f, "example.com", "www", "A"); len(got.Records) != 3 {
			t.Fatalf("after add %+v", got.Records)
		}
		f.ok(t, "add_records", map[string]any{"zone": "example.com", "name": "new", "type": "A", "ttl": 60, "records": recs("198.51.100.4")}, &done)
		getRRSet(t, f, "example.com", "new", "A")

		f.confirmed(t, "set_records", with(www, "records", recs("198.51.100.10")), &done)
		if got := getRRSet(t, f, "example.com", "www", "A"); values(got) != "198.51.100.10" {
			t.Fatalf("after set %+v", got.Records)
		}
		f.ok(t, "update_records", with(www, "records", []any{map[string]any{"value": "198.51.100.10", "comment": "primary web"}}), &done)
		if got := getRRSet(t, f, "example.com", "www", "A"); got.Records[0].Comment != "primary web" {
			t.Fatalf("after update_records %+v", got.Records)
		}
		f.ok(t, "change_rrset_ttl", with(www, "ttl", 900), &done)
		if got := getRRSet(t, f, "example.com", "www", "A"); got.TTL == nil || *got.TTL != 900 {
			t.Fatalf("ttl %v", got.TTL)
		}
		f.ok(t, "change_rrset_ttl", with(www, "ttl", nil), &done)
		if got := getRRSet(t, f, "example.com", "www", "A"); got.TTL != nil {
			t.Fatalf("ttl not reset: %v", *got.TTL)
		}
		f.ok(t, "change_rrset_protection", with(www, "change", true), &done)
		if !getRRSet(t, f, "example.com", "www", "A").Protection.Change {
			t.Fatal("not protected")
		}
		f.confirmed(t, "change_rrset_protection", with(www, "change", false), &done)

		f.ok(t, "add_records", with(www, "records", recs("198.51.100.11")), &done)
		f.confirmed(t, "remove_records", with(www, "records", recs("198.51.100.10")), &done)
		if got := getRRSet(t, f, "example.com", "www", "A"); values(got) != "198.51.100.11" {
			t.Fatalf("after remove %+v", got.Records)
		}
		f.confirmed(t, "delete_rrset", www, &done)
		f.fails(t, "get_rrset", www, "not_found")
	})
}

func TestResultsAreEnveloped(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: standard(t)})
		res := f.call(t, "get_rrset", map[string]any{"zone": "example.com", "name": "www", "type": "A"})
		text := mcptest.Text(res)
		contains(t, text, `<untrusted-data source="`+sourceOf(mk.name)+`">`, "</untrusted-data>",
			"record values, comments, labels and zone files are written by whoever controls the zone")
		if res.Meta["bulwark/untrusted"] == nil {
			t.Fatal("no untrusted meta")
		}
	})
}
