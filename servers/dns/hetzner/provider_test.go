package hetzner

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

func TestName(t *testing.T) {
	_, c := startFake(t, nil)
	if c.Name() != "hetzner" {
		t.Fatalf("Name() = %q", c.Name())
	}
}

func TestZoneLifecycle(t *testing.T) {
	fake, c := startFake(t, nil)
	ctx := t.Context()

	z, act, err := c.CreateZone(ctx, dns.CreateZoneRequest{Name: "example.com", Mode: dns.ModePrimary, TTL: ptr(7200), Labels: map[string]string{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if z.Name != "example.com" || z.TTL != 7200 || z.Labels["env"] != "prod" || z.RecordCount != 4 || act == nil || act.ID == 0 {
		t.Fatalf("created zone %+v, action %+v", z, act)
	}
	_, _, err = c.CreateZone(ctx, dns.CreateZoneRequest{Name: "example.com", Mode: dns.ModePrimary})
	apiErr(t, err, "uniqueness_error", 409)

	byName := must[dns.Zone](t)(c.GetZone(ctx, "example.com"))
	byID := must[dns.Zone](t)(c.GetZone(ctx, itoa(z.ID)))
	if byName.ID != z.ID || byID.Name != "example.com" {
		t.Fatalf("get by name %+v, by id %+v", byName, byID)
	}
	_, err = c.GetZone(ctx, "missing.com")
	apiErr(t, err, "not_found", 404)

	upd := must[dns.Zone](t)(c.UpdateZone(ctx, "example.com", map[string]string{"team": "dns"}))
	if len(upd.Labels) != 1 || upd.Labels["team"] != "dns" {
		t.Fatalf("labels after update %v, want only team=dns", upd.Labels)
	}
	cleared := must[dns.Zone](t)(c.UpdateZone(ctx, "example.com", nil))
	if len(cleared.Labels) != 0 {
		t.Fatalf("nil labels did not clear: %v", cleared.Labels)
	}

	must[*dns.Action](t)(c.ChangeZoneTTL(ctx, "example.com", 600))
	if got, _ := fake.Zone("example.com"); got.TTL != 600 {
		t.Fatalf("zone ttl %d after ChangeZoneTTL(600)", got.TTL)
	}
	_, err = c.ChangeZoneTTL(ctx, "example.com", 10)
	de := apiErr(t, err, "invalid_input", 422)
	if len(de.Fields) == 0 || de.Fields[0].Name != "ttl" {
		t.Fatalf("invalid_input fields %+v, want ttl", de.Fields)
	}

	must[*dns.Action](t)(c.ChangeZoneProtection(ctx, "example.com", true))
	_, err = c.DeleteZone(ctx, "example.com")
	apiErr(t, err, "protected", 423)
	must[*dns.Action](t)(c.ChangeZoneProtection(ctx, "example.com", false))
	act, err = c.DeleteZone(ctx, "example.com")
	if err != nil || act == nil {
		t.Fatalf("delete: %v, %v", act, err)
	}
	if _, ok := fake.Zone("example.com"); ok {
		t.Fatal("zone still there after DeleteZone")
	}
	_, err = c.ChangePrimaryNameservers(ctx, "missing.com", []dns.PrimaryNameserver{{Address: "198.51.100.1"}})
	apiErr(t, err, "not_found", 404)
}

func TestListZones(t *testing.T) {
	fake, c := startFake(t, nil)
	for _, n := range []string{"a-zone.com", "b-zone.com", "c-zone.com"} {
		if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: n, Labels: map[string]string{"k": n[:1]}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	all := must[dns.ZoneList](t)(c.ListZones(ctx, dns.ListZonesOptions{Sort: []string{"name:desc"}}))
	if names := zoneNames(all.Zones); !slices.Equal(names, []string{"c-zone.com", "b-zone.com", "a-zone.com"}) {
		t.Fatalf("sorted names %v", names)
	}
	page := must[dns.ZoneList](t)(c.ListZones(ctx, dns.ListZonesOptions{Sort: []string{"name"}, Page: 2, PerPage: 2}))
	if names := zoneNames(page.Zones); !slices.Equal(names, []string{"c-zone.com"}) || page.Pagination.Page != 2 || page.Pagination.PerPage != 2 {
		t.Fatalf("page 2: %v %+v", names, page.Pagination)
	}
	if page.Pagination.TotalEntries == nil || *page.Pagination.TotalEntries != 3 || page.Pagination.NextPage != nil {
		t.Fatalf("pagination %+v", page.Pagination)
	}
	one := must[dns.ZoneList](t)(c.ListZones(ctx, dns.ListZonesOptions{Name: "b-zone.com"}))
	sel := must[dns.ZoneList](t)(c.ListZones(ctx, dns.ListZonesOptions{LabelSelector: "k in (a,c)"}))
	if len(one.Zones) != 1 || len(sel.Zones) != 2 {
		t.Fatalf("name filter %v, selector %v", zoneNames(one.Zones), zoneNames(sel.Zones))
	}
	_, err := c.ListZones(ctx, dns.ListZonesOptions{LabelSelector: "k in (("})
	apiErr(t, err, "invalid_input", 422)
	_, err = c.ListZones(ctx, dns.ListZonesOptions{Page: -1})
	apiErr(t, err, "invalid_input", 422)
}

func zoneNames(zs []dns.Zone) []string {
	var out []string
	for _, z := range zs {
		out = append(out, z.Name)
	}
	return out
}

func TestRRSetLifecycle(t *testing.T) {
	fake, c := startFake(t, nil)
	ctx := t.Context()
	if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	rr, act, err := c.CreateRRSet(ctx, "example.com", dns.CreateRRSetRequest{
		Name: "www", Type: "A", TTL: ptr(300), Labels: map[string]string{"app": "web"},
		Records: []dns.Record{{Value: "198.51.100.7", Comment: "web"}},
	})
	if err != nil || act == nil || rr.ID != "www/A" || *rr.TTL != 300 || len(rr.Records) != 1 {
		t.Fatalf("create: %+v %+v %v", rr, act, err)
	}
	_, _, err = c.CreateRRSet(ctx, "example.com", dns.CreateRRSetRequest{Name: "www", Type: "A", Records: []dns.Record{{Value: "198.51.100.8"}}})
	apiErr(t, err, "uniqueness_error", 409)

	got := must[dns.RRSet](t)(c.GetRRSet(ctx, "example.com", "www", "A"))
	if got.Records[0].Comment != "web" || got.Labels["app"] != "web" {
		t.Fatalf("get: %+v", got)
	}
	_, err = c.GetRRSet(ctx, "example.com", "nope", "A")
	apiErr(t, err, "not_found", 404)

	must[dns.RRSet](t)(c.UpdateRRSet(ctx, "example.com", "www", "A", map[string]string{"app": "api"}))
	must[*dns.Action](t)(c.AddRecords(ctx, "example.com", "www", "A", []dns.Record{{Value: "198.51.100.8"}}, nil))
	must[*dns.Action](t)(c.AddRecords(ctx, "example.com", "@", "TXT", []dns.Record{{Value: `"v=spf1 -all"`}}, ptr(900)))
	if txt, ok := fake.RRSet("example.com", "@", "TXT"); !ok || *txt.TTL != 900 {
		t.Fatalf("add_records did not create @/TXT with ttl 900: %+v", txt)
	}
	must[*dns.Action](t)(c.RemoveRecords(ctx, "example.com", "www", "A", []dns.Record{{Value: "198.51.100.7"}}))
	must[*dns.Action](t)(c.UpdateRecords(ctx, "example.com", "www", "A", []dns.Record{{Value: "198.51.100.8", Comment: "second"}}))
	www, _ := fake.RRSet("example.com", "www", "A")
	if len(www.Records) != 1 || www.Records[0] != (hetznerapi.Record{Value: "198.51.100.8", Comment: "second"}) {
		t.Fatalf("records after add/remove/update %+v", www.Records)
	}
	must[*dns.Action](t)(c.SetRecords(ctx, "example.com", "www", "A", []dns.Record{{Value: "203.0.113.1"}, {Value: "203.0.113.2"}}))
	must[*dns.Action](t)(c.ChangeRRSetTTL(ctx, "example.com", "www", "A", nil))
	www, _ = fake.RRSet("example.com", "www", "A")
	if len(www.Records) != 2 || www.TTL != nil || www.Labels["app"] != "api" {
		t.Fatalf("after set_records and ttl reset %+v", www)
	}
	_, err = c.SetRecords(ctx, "example.com", "missing", "A", []dns.Record{{Value: "203.0.113.1"}})
	apiErr(t, err, "not_found", 404)

	must[*dns.Action](t)(c.ChangeRRSetProtection(ctx, "example.com", "www", "A", true))
	_, err = c.DeleteRRSet(ctx, "example.com", "www", "A")
	apiErr(t, err, "protected", 423)
	_, err = c.SetRecords(ctx, "example.com", "www", "A", []dns.Record{{Value: "203.0.113.9"}})
	apiErr(t, err, "protected", 423)
	must[*dns.Action](t)(c.ChangeRRSetProtection(ctx, "example.com", "www", "A", false))
	must[*dns.Action](t)(c.DeleteRRSet(ctx, "example.com", "www", "A"))
	if _, ok := fake.RRSet("example.com", "www", "A"); ok {
		t.Fatal("www/A survived DeleteRRSet")
	}
}

func TestListRRSets(t *testing.T) {
	fake, c := startFake(t, nil)
	if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []hetznerapi.RRSetSeed{
		{Name: "www", Type: "A", Records: []hetznerapi.Record{{Value: "198.51.100.1"}}, Labels: map[string]string{"tier": "web"}},
		{Name: "www", Type: "AAAA", Records: []hetznerapi.Record{{Value: "2001:db8::1"}}},
		{Name: "mail", Type: "A", Records: []hetznerapi.Record{{Value: "198.51.100.2"}}},
	} {
		if _, err := fake.AddRRSet("example.com", s); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	a := must[dns.RRSetList](t)(c.ListRRSets(ctx, "example.com", dns.ListRRSetsOptions{Types: []string{"A", "AAAA"}, Sort: []string{"name"}}))
	if ids := rrsetIDs(a.RRSets); !slices.Equal(ids, []string{"mail/A", "www/A", "www/AAAA"}) {
		t.Fatalf("A+AAAA sorted by name: %v", ids)
	}
	www := must[dns.RRSetList](t)(c.ListRRSets(ctx, "example.com", dns.ListRRSetsOptions{Name: "www", LabelSelector: "tier=web"}))
	if ids := rrsetIDs(www.RRSets); !slices.Equal(ids, []string{"www/A"}) {
		t.Fatalf("name+selector: %v", ids)
	}
	all := must[dns.RRSetList](t)(c.ListRRSets(ctx, "example.com", dns.ListRRSetsOptions{PerPage: 100}))
	if len(all.RRSets) != 5 { // + SOA and NS
		t.Fatalf("all rrsets: %v", rrsetIDs(all.RRSets))
	}
	_, err := c.ListRRSets(ctx, "example.com", dns.ListRRSetsOptions{Types: []string{"a"}})
	apiErr(t, err, "invalid_input", 422)
}

func rrsetIDs(rs []dns.RRSet) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestZonefileExportImport(t *testing.T) {
	fake, c := startFake(t, nil)
	ctx := t.Context()
	if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.AddRRSet("example.com", hetznerapi.RRSetSeed{Name: "www", Type: "A", Records: []hetznerapi.Record{{Value: "198.51.100.1", Comment: "kept"}}}); err != nil {
		t.Fatal(err)
	}
	zf := must[string](t)(c.ExportZonefile(ctx, "example.com"))
	if !strings.Contains(zf, "198.51.100.1") || !strings.Contains(zf, "SOA") {
		t.Fatalf("export lacks records:\n%s", zf)
	}
	changed := strings.Replace(zf, "198.51.100.1", "198.51.100.99", 1)
	must[*dns.Action](t)(c.ImportZonefile(ctx, "example.com", changed))
	if rr, _ := fake.RRSet("example.com", "www", "A"); len(rr.Records) != 1 || rr.Records[0].Value != "198.51.100.99" {
		t.Fatalf("after import %+v", rr)
	}
	_, err := c.ImportZonefile(ctx, "example.com", "garbage")
	apiErr(t, err, "invalid_input", 422)
}

func TestSecondaryZone(t *testing.T) {
	_, c := startFake(t, nil)
	ctx := t.Context()
	ns := []dns.PrimaryNameserver{{Address: "198.51.100.53", Port: 53, TSIGKey: "c2VjcmV0", TSIGAlgorithm: "hmac-sha256"}}
	z, _, err := c.CreateZone(ctx, dns.CreateZoneRequest{Name: "example.net", Mode: dns.ModeSecondary, PrimaryNameservers: ns})
	if err != nil || z.Mode != dns.ModeSecondary || len(z.PrimaryNameservers) != 1 {
		t.Fatalf("create secondary: %+v %v", z, err)
	}
	must[*dns.Action](t)(c.ChangePrimaryNameservers(ctx, "example.net", []dns.PrimaryNameserver{{Address: "198.51.100.54"}}))
	_, err = c.ListRRSets(ctx, "example.net", dns.ListRRSetsOptions{})
	apiErr(t, err, "incorrect_zone_mode", 422)
	_, err = c.ExportZonefile(ctx, "example.net")
	apiErr(t, err, "incorrect_zone_mode", 422)
	_, err = c.ChangeZoneTTL(ctx, "example.net", 600)
	apiErr(t, err, "incorrect_zone_mode", 422)
}

func TestActions(t *testing.T) {
	fake, c := startFake(t, &hetznerapi.Options{ManualActions: true, LockWhileRunning: true})
	ctx := t.Context()
	if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.org"}); err != nil {
		t.Fatal(err)
	}
	act := must[*dns.Action](t)(c.ChangeZoneTTL(ctx, "example.com", 600))
	if act.Status != dns.ActionRunning {
		t.Fatalf("action status %q, want running", act.Status)
	}
	_, err := c.ChangeZoneTTL(ctx, "example.com", 900)
	apiErr(t, err, "locked", 423)
	must[*dns.Action](t)(c.ChangeZoneTTL(ctx, "example.org", 600))

	got := must[dns.Action](t)(c.GetAction(ctx, act.ID))
	if got.ID != act.ID || got.Status != dns.ActionRunning {
		t.Fatalf("GetAction %+v", got)
	}
	zoneOnly := must[dns.ActionList](t)(c.ListActions(ctx, dns.ListActionsOptions{Zone: "example.com"}))
	all := must[dns.ActionList](t)(c.ListActions(ctx, dns.ListActionsOptions{Status: []string{"running"}, Sort: []string{"id:desc"}}))
	if len(zoneOnly.Actions) != 1 || len(all.Actions) != 2 || all.Actions[0].ID < all.Actions[1].ID {
		t.Fatalf("zone actions %d, running actions %+v", len(zoneOnly.Actions), all.Actions)
	}
	fake.CompleteActions()
	done := must[dns.ActionList](t)(c.ListActions(ctx, dns.ListActionsOptions{Status: []string{"success", "error"}}))
	if len(done.Actions) != 2 {
		t.Fatalf("finished actions %+v", done.Actions)
	}
	fake.FailNextAction("zonefile_error", "bad")
	failing := must[*dns.Action](t)(c.ChangeZoneTTL(ctx, "example.com", 900))
	fake.CompleteActions()
	if got := must[dns.Action](t)(c.GetAction(ctx, failing.ID)); got.Status != dns.ActionError || got.Error == nil || got.Error.Code != "zonefile_error" {
		t.Fatalf("failed action %+v", got)
	}
	_, err = c.GetAction(ctx, 999999)
	apiErr(t, err, "not_found", 404)
	_, err = c.GetAction(ctx, 0)
	apiErr(t, err, "invalid_input", 422)
}

func TestAuthErrors(t *testing.T) {
	fake, _ := startFake(t, nil)
	ctx := t.Context()
	ro := newClient(t, fake.URL(), StaticToken(readToken), testHTTP())
	if _, err := ro.ListZones(ctx, dns.ListZonesOptions{}); err != nil {
		t.Fatalf("read token cannot read: %v", err)
	}
	_, _, err := ro.CreateZone(ctx, dns.CreateZoneRequest{Name: "example.com", Mode: dns.ModePrimary})
	apiErr(t, err, "token_readonly", http.StatusUnauthorized)

	wrong := newClient(t, fake.URL(), StaticToken("not-"+testToken), testHTTP())
	_, err = wrong.GetZone(ctx, "example.com")
	apiErr(t, err, "unauthorized", http.StatusUnauthorized)
}
