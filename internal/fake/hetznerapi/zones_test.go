package hetznerapi

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestCreatePrimaryZone(t *testing.T) {
	s := Start(t, nil)
	r := do(t, s, "POST", "/zones", map[string]any{"name": "example.com", "mode": "primary",
		"labels": map[string]string{"env": "prod"}})
	want(t, r, 201, "")
	if r.num("zone.record_count") != 4 || r.num("zone.ttl") != 3600 || r.str("zone.mode") != "primary" ||
		r.str("action.status") != StatusRunning || r.num("action.progress") != 0 || r.get("action.finished") != nil {
		t.Fatalf("answer %s", r.raw)
	}
	assigned := r.get("zone.authoritative_nameservers.assigned").([]any)
	if len(assigned) != 3 || assigned[0] != "hydrogen.ns.hetzner.com." {
		t.Errorf("assigned %v", assigned)
	}
	id := r.num("zone.id")
	res := r.get("action.resources").([]any)[0].(map[string]any)
	if int(res["id"].(float64)) != id || res["type"] != "zone" {
		t.Errorf("resources %v", res)
	}
	for _, p := range []string{fmt.Sprint(id), "example.com"} {
		g := do(t, s, "GET", "/zones/"+p, nil)
		want(t, g, 200, "")
		if g.num("zone.id") != id || g.str("zone.labels.env") != "prod" {
			t.Errorf("get %s: %s", p, g.raw)
		}
	}
	soa := do(t, s, "GET", "/zones/example.com/rrsets/@/SOA", nil)
	want(t, soa, 200, "")
	if v := soa.get("rrset.records").([]any)[0].(map[string]any)["value"].(string); !strings.HasPrefix(v, soaPrefix) {
		t.Errorf("soa %q", v)
	}
	ns := do(t, s, "GET", "/zones/example.com/rrsets/@/NS", nil)
	if len(ns.get("rrset.records").([]any)) != 3 || ns.str("rrset.id") != "@/NS" {
		t.Errorf("ns %s", ns.raw)
	}
	want(t, do(t, s, "POST", "/zones", map[string]any{"name": "example.com", "mode": "primary"}), 409,
		CodeUniquenessError)
}

func TestCreateZoneWithRRSets(t *testing.T) {
	s := Start(t, nil)
	r := do(t, s, "POST", "/zones", map[string]any{"name": "example.org", "mode": "primary", "rrsets": []any{
		map[string]any{"name": "www", "type": "A", "records": recs("198.51.100.1", "198.51.100.2")},
		map[string]any{"name": "@", "type": "NS", "records": recs("ns1.example.net.")},
	}})
	want(t, r, 201, "")
	if r.num("zone.record_count") != 7 {
		t.Errorf("record_count %d", r.num("zone.record_count"))
	}
}

func TestCreateZoneValidation(t *testing.T) {
	s := Start(t, nil)
	if _, err := s.AddZone(ZoneSeed{Name: "taken.com"}); err != nil {
		t.Fatal(err)
	}
	ns := []map[string]any{{"address": "192.0.2.53"}}
	cases := []struct {
		name   string
		body   map[string]any
		status int
		code   string
		field  string
	}{
		{"missing name", map[string]any{"mode": "primary"}, 422, CodeInvalidInput, "name"},
		{"upper case", map[string]any{"name": "Example.com", "mode": "primary"}, 422, CodeInvalidInput, "name"},
		{"trailing dot", map[string]any{"name": "example.com.", "mode": "primary"}, 422, CodeInvalidInput, "name"},
		{"sub-domain", map[string]any{"name": "www.example.com", "mode": "primary"}, 422, CodeInvalidInput, "name"},
		{"public suffix", map[string]any{"name": "co.uk", "mode": "primary"}, 422, CodeInvalidInput, "name"},
		{"unknown tld", map[string]any{"name": "example.invalidtld", "mode": "primary"}, 422, CodeInvalidInput, "name"},
		{"bad mode", map[string]any{"name": "example.com", "mode": "tertiary"}, 422, CodeInvalidInput, "mode"},
		{"ttl low", map[string]any{"name": "example.com", "mode": "primary", "ttl": 59}, 422, CodeInvalidInput, "ttl"},
		{"bad label", map[string]any{"name": "example.com", "mode": "primary",
			"labels": map[string]string{"-x": "y"}}, 422, CodeInvalidInput, "labels"},
		{"reserved label", map[string]any{"name": "example.com", "mode": "primary",
			"labels": map[string]string{"hetzner.cloud/x": "y"}}, 422, CodeInvalidInput, "labels"},
		{"ns on primary", map[string]any{"name": "example.com", "mode": "primary",
			"primary_nameservers": ns}, 422, CodeInvalidInput, "primary_nameservers"},
		{"secondary without ns", map[string]any{"name": "example.com", "mode": "secondary"}, 422,
			CodeInvalidInput, "primary_nameservers"},
		{"secondary bad port", map[string]any{"name": "example.com", "mode": "secondary",
			"primary_nameservers": []map[string]any{{"address": "192.0.2.53", "port": 70000}}}, 422,
			CodeInvalidInput, "primary_nameservers"},
		{"zonefile and rrsets", map[string]any{"name": "example.com", "mode": "primary", "zonefile": "x",
			"rrsets": []any{}}, 422, CodeInvalidInput, "zonefile"},
		{"soa in rrsets", map[string]any{"name": "example.com", "mode": "primary", "rrsets": []any{
			map[string]any{"name": "@", "type": "SOA", "records": recs(soaPrefix + "1" + soaTail)}}}, 422,
			CodeInvalidInput, "rrsets"},
		{"duplicate", map[string]any{"name": "taken.com", "mode": "primary"}, 409, CodeUniquenessError, "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, s, "POST", "/zones", c.body)
			want(t, r, c.status, c.code)
			f := r.get("error.details").(map[string]any)["fields"].([]any)[0].(map[string]any)
			if f["name"] != c.field {
				t.Errorf("field %v, want %s", f["name"], c.field)
			}
		})
	}
	if n := len(s.Actions()); n != 0 {
		t.Errorf("refused creates made %d actions", n)
	}
}

func TestSecondaryZone(t *testing.T) {
	s, _ := newPrimary(t, nil)
	r := do(t, s, "POST", "/zones", map[string]any{"name": "example.net", "mode": "secondary",
		"primary_nameservers": []map[string]any{{"address": "192.0.2.53", "tsig_key": "c2VjcmV0",
			"tsig_algorithm": "hmac-sha256"}}})
	want(t, r, 201, "")
	pn := r.get("zone.primary_nameservers").([]any)[0].(map[string]any)
	if pn["port"].(float64) != 53 || pn["tsig_key"] != "c2VjcmV0" {
		t.Errorf("primary_nameservers %v", pn)
	}
	if r.num("zone.record_count") != 0 {
		t.Errorf("record_count %d", r.num("zone.record_count"))
	}
	cases := []struct{ method, path string }{
		{"GET", "/zones/example.net/rrsets"},
		{"POST", "/zones/example.net/rrsets"},
		{"GET", "/zones/example.net/rrsets/www/A"},
		{"POST", "/zones/example.net/rrsets/www/A/actions/add_records"},
		{"POST", "/zones/example.net/actions/change_ttl"},
		{"POST", "/zones/example.net/actions/import_zonefile"},
		{"GET", "/zones/example.net/zonefile"},
		{"POST", "/zones/example.com/actions/change_primary_nameservers"},
	}
	for _, c := range cases {
		want(t, do(t, s, c.method, c.path, map[string]any{}), 422, CodeIncorrectZoneMode)
	}
	want(t, do(t, s, "POST", "/zones/example.net/actions/change_primary_nameservers",
		map[string]any{"primary_nameservers": []map[string]any{{"address": "2001:db8::53", "port": 5353}}}), 201, "")
	z, _ := s.Zone("example.net")
	if len(z.PrimaryNameservers) != 1 || z.PrimaryNameservers[0].Port != 5353 {
		t.Errorf("nameservers %+v", z.PrimaryNameservers)
	}
	want(t, do(t, s, "POST", "/zones/example.net/actions/change_protection", map[string]any{"delete": true}), 201, "")
}

func seedZones(t *testing.T, s *Server, n int) {
	t.Helper()
	for i := range n {
		labels := map[string]string{"idx": fmt.Sprint(i)}
		if i%2 == 0 {
			labels["even"] = ""
		}
		if _, err := s.AddZone(ZoneSeed{Name: fmt.Sprintf("zone%02d.com", i), Labels: labels}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestListZonesPagination(t *testing.T) {
	s := Start(t, nil)
	seedZones(t, s, 61)
	cases := []struct {
		query                 string
		page, per, items      int
		prev, next, last, tot any
	}{
		{"", 1, 25, 25, nil, 2.0, 3.0, 61.0},
		{"?page=2", 2, 25, 25, 1.0, 3.0, 3.0, 61.0},
		{"?page=3", 3, 25, 11, 2.0, nil, 3.0, 61.0},
		{"?per_page=50", 1, 50, 50, nil, 2.0, 2.0, 61.0},
		{"?per_page=51", 1, 50, 50, nil, 2.0, 2.0, 61.0},
		{"?page=9", 9, 25, 0, 3.0, nil, 3.0, 61.0},
		{"?name=nope.com", 1, 25, 0, nil, nil, 1.0, 0.0},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := do(t, s, "GET", "/zones"+c.query, nil)
			want(t, r, 200, "")
			p := r.get("meta.pagination").(map[string]any)
			if int(p["page"].(float64)) != c.page || int(p["per_page"].(float64)) != c.per ||
				p["previous_page"] != c.prev || p["next_page"] != c.next || p["last_page"] != c.last ||
				p["total_entries"] != c.tot || len(r.get("zones").([]any)) != c.items {
				t.Errorf("meta %v, %d items", p, len(r.get("zones").([]any)))
			}
		})
	}
	link := do(t, s, "GET", "/zones?page=2&name=", nil).header.Get("Link")
	for _, rel := range []string{`page=1>; rel="prev"`, `page=3>; rel="next"`, `page=3>; rel="last"`} {
		if !strings.Contains(link, rel) {
			t.Errorf("Link %q lacks %s", link, rel)
		}
	}
	for _, q := range []string{"page=0", "page=x", "per_page=0", "sort=size", "sort=name,id", "sort=name:up",
		"mode=both", "label_selector=a%3D%3D%3Db"} {
		want(t, do(t, s, "GET", "/zones?"+q, nil), 422, CodeInvalidInput)
	}
	strict := Start(t, &Options{RejectPerPageOverMax: true})
	want(t, do(t, strict, "GET", "/zones?per_page=51", nil), 422, CodeInvalidInput)
}

func zoneNames(r resp) []string {
	var out []string
	for _, z := range r.get("zones").([]any) {
		out = append(out, z.(map[string]any)["name"].(string))
	}
	return out
}

func TestListZonesFilters(t *testing.T) {
	s := Start(t, nil)
	seedZones(t, s, 6)
	if _, err := s.AddZone(ZoneSeed{Name: "sec.com", Mode: ModeSecondary,
		PrimaryNameservers: []PrimaryNameserver{{Address: "192.0.2.1"}}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ query, want string }{
		{"name=zone03.com", "zone03.com"},
		{"name=zone03", ""},
		{"mode=secondary", "sec.com"},
		{"label_selector=" + url.QueryEscape("idx in (1,4)"), "zone01.com zone04.com"},
		{"label_selector=" + url.QueryEscape("even,idx!=0"), "zone02.com zone04.com"},
		{"label_selector=" + url.QueryEscape("!even") + "&mode=primary", "zone01.com zone03.com zone05.com"},
		{"sort=name:desc&per_page=2", "zone05.com zone04.com"},
		{"sort=id&per_page=2", "zone00.com zone01.com"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := do(t, s, "GET", "/zones?"+c.query, nil)
			want(t, r, 200, "")
			if got := strings.Join(zoneNames(r), " "); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestUpdateZoneReplacesLabels(t *testing.T) {
	s := Start(t, nil)
	if _, err := s.AddZone(ZoneSeed{Name: "example.com", Labels: map[string]string{"a": "1", "b": "2"}}); err != nil {
		t.Fatal(err)
	}
	r := do(t, s, "PUT", "/zones/example.com", map[string]any{"labels": map[string]string{"c": "3"}, "ttl": 60})
	want(t, r, 200, "")
	if l := r.get("zone.labels").(map[string]any); len(l) != 1 || l["c"] != "3" || r.num("zone.ttl") != 3600 {
		t.Errorf("zone %s", r.raw)
	}
	want(t, do(t, s, "PUT", "/zones/example.com", map[string]any{"labels": map[string]string{"a": "x y"}}),
		422, CodeInvalidInput)
	if len(s.Actions()) != 0 {
		t.Error("label updates are not actions")
	}
}

func TestDeleteZoneProtection(t *testing.T) {
	s := Start(t, nil)
	if _, err := s.AddZone(ZoneSeed{Name: "example.com", DeleteProtected: true}); err != nil {
		t.Fatal(err)
	}
	want(t, do(t, s, "DELETE", "/zones/example.com", nil), 423, CodeProtected)
	want(t, do(t, s, "POST", "/zones/example.com/actions/change_protection", map[string]any{"delete": false}), 201, "")
	r := do(t, s, "DELETE", "/zones/example.com", nil)
	want(t, r, 201, "")
	if r.str("action.command") == "" || r.get("zone") != nil {
		t.Errorf("delete answer %s", r.raw)
	}
	want(t, do(t, s, "GET", "/zones/example.com", nil), 404, CodeNotFound)
	want(t, do(t, s, "GET", "/zones/actions/"+fmt.Sprint(r.num("action.id")), nil), 200, "")
}

func TestChangeZoneTTL(t *testing.T) {
	s, _ := newPrimary(t, nil)
	want(t, do(t, s, "POST", "/zones/example.com/actions/change_ttl", map[string]any{}), 422, CodeInvalidInput)
	want(t, do(t, s, "POST", "/zones/example.com/actions/change_ttl", map[string]any{"ttl": 59}), 422, CodeInvalidInput)
	want(t, do(t, s, "POST", "/zones/example.com/actions/change_ttl", map[string]any{"ttl": 600}), 201, "")
	if z, _ := s.Zone("example.com"); z.TTL != 600 {
		t.Errorf("ttl %d", z.TTL)
	}
}
