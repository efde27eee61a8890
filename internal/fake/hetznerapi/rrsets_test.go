package hetznerapi

import (
	"strings"
	"testing"
)

const zpath = "/zones/example.com"

func TestCreateRRSet(t *testing.T) {
	s, z := newPrimary(t, nil)
	r := do(t, s, "POST", zpath+"/rrsets", map[string]any{"name": "www", "type": "A", "ttl": 300,
		"labels": map[string]string{"app": "web"}, "records": []Record{{Value: "198.51.100.7", Comment: "web"}}})
	want(t, r, 201, "")
	if r.str("rrset.id") != "www/A" || r.num("rrset.ttl") != 300 || r.num("rrset.zone") != int(z.ID) ||
		r.str("action.status") != StatusRunning || r.get("rrset.protection.change") != false {
		t.Fatalf("answer %s", r.raw)
	}
	want(t, do(t, s, "POST", zpath+"/rrsets", map[string]any{"name": "www", "type": "A",
		"records": recs("198.51.100.8")}), 409, CodeUniquenessError)
	for _, name := range []string{"*", "*.sub", "_acme-challenge", "a.b.c"} {
		r := do(t, s, "POST", zpath+"/rrsets", map[string]any{"name": name, "type": "TXT",
			"records": recs(`"v=spf1 -all"`, `"part one" "part two"`)})
		want(t, r, 201, "")
		if r.get("rrset.ttl") != nil || r.str("rrset.id") != name+"/TXT" {
			t.Errorf("%s: %s", name, r.raw)
		}
	}
	if zz, _ := s.Zone("example.com"); zz.RecordCount != 4+1+8 {
		t.Errorf("record_count %d", zz.RecordCount)
	}
}

func TestRRSetValidation(t *testing.T) {
	s, _ := newPrimary(t, nil)
	long := `"` + strings.Repeat("x", 256) + `"`
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"ttl low", map[string]any{"name": "a", "type": "A", "ttl": 59, "records": recs("192.0.2.1")}, "ttl"},
		{"ttl high", map[string]any{"name": "a", "type": "A", "ttl": 2147483648, "records": recs("192.0.2.1")}, "ttl"},
		{"no records", map[string]any{"name": "a", "type": "A", "records": []Record{}}, "records"},
		{"duplicate", map[string]any{"name": "a", "type": "A", "records": recs("192.0.2.1", "192.0.2.1")}, "records"},
		{"unknown type", map[string]any{"name": "a", "type": "SPF", "records": recs(`"x"`)}, "type"},
		{"lower type", map[string]any{"name": "a", "type": "a", "records": recs("192.0.2.1")}, "type"},
		{"upper name", map[string]any{"name": "WWW", "type": "A", "records": recs("192.0.2.1")}, "name"},
		{"trailing dot", map[string]any{"name": "www.", "type": "A", "records": recs("192.0.2.1")}, "name"},
		{"zone suffix", map[string]any{"name": "www.example.com", "type": "A", "records": recs("192.0.2.1")}, "name"},
		{"zone name", map[string]any{"name": "example.com", "type": "A", "records": recs("192.0.2.1")}, "name"},
		{"inner star", map[string]any{"name": "a.*", "type": "A", "records": recs("192.0.2.1")}, "name"},
		{"encoded at", map[string]any{"name": "%40", "type": "A", "records": recs("192.0.2.1")}, "name"},
		{"empty name", map[string]any{"type": "A", "records": recs("192.0.2.1")}, "name"},
		{"bad A", map[string]any{"name": "a", "type": "A", "records": recs("192.0.2.300")}, "records"},
		{"AAAA in A", map[string]any{"name": "a", "type": "A", "records": recs("2001:db8::1")}, "records"},
		{"comment in value", map[string]any{"name": "a", "type": "A", "records": recs("192.0.2.1 ; hi")}, "records"},
		{"newline in value", map[string]any{"name": "a", "type": "A", "records": recs("192.0.2.1\n192.0.2.2")}, "records"},
		{"unquoted TXT", map[string]any{"name": "a", "type": "TXT", "records": recs("v=spf1 -all")}, "records"},
		{"long TXT chunk", map[string]any{"name": "a", "type": "TXT", "records": recs(long)}, "records"},
		{"unterminated TXT", map[string]any{"name": "a", "type": "TXT", "records": recs(`"abc`)}, "records"},
		{"bad MX", map[string]any{"name": "a", "type": "MX", "records": recs("mail.example.com.")}, "records"},
		{"newline comment", map[string]any{"name": "a", "type": "A",
			"records": []Record{{Value: "192.0.2.1", Comment: "a\nb"}}}, "records"},
		{"bad label", map[string]any{"name": "a", "type": "A", "records": recs("192.0.2.1"),
			"labels": map[string]string{"k": strings.Repeat("v", 64)}}, "labels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, s, "POST", zpath+"/rrsets", c.body)
			want(t, r, 422, CodeInvalidInput)
			f := r.get("error.details").(map[string]any)["fields"].([]any)[0].(map[string]any)
			if f["name"] != c.field {
				t.Errorf("field %v, want %s", f["name"], c.field)
			}
		})
	}
	ok := map[string]string{"MX": "10 mail.example.com.", "CNAME": "www", "CAA": `0 issue "letsencrypt.org"`,
		"SRV": "10 5 5060 sip.example.com.", "AAAA": "2001:db8::1", "TXT": `"a\"b" "c\\d" "\065"`}
	for typ, v := range ok {
		want(t, do(t, s, "POST", zpath+"/rrsets", map[string]any{"name": "ok", "type": typ, "records": recs(v)}), 201, "")
	}
}

func TestListRRSets(t *testing.T) {
	s, _ := newPrimary(t, nil)
	for _, n := range []string{"b", "a", "c"} {
		mustRRSet(t, s, "example.com", RRSetSeed{Name: n, Type: "A", Records: recs("192.0.2.1"),
			Labels: map[string]string{"name": n}})
		mustRRSet(t, s, "example.com", RRSetSeed{Name: n, Type: "AAAA", Records: recs("2001:db8::1")})
	}
	cases := []struct{ query, want string }{
		{"", "@/NS @/SOA a/A a/AAAA b/A b/AAAA c/A c/AAAA"},
		{"type=A&type=AAAA&sort=name:desc", "c/A c/AAAA b/A b/AAAA a/A a/AAAA"},
		{"name=b", "b/A b/AAAA"},
		{"type=NS", "@/NS"},
		{"label_selector=name+notin+(a,b)", "@/NS @/SOA a/AAAA b/AAAA c/A c/AAAA"},
		{"label_selector=name", "a/A b/A c/A"},
		{"sort=created&per_page=3&page=2", "b/AAAA a/A a/AAAA"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := do(t, s, "GET", zpath+"/rrsets?"+c.query, nil)
			want(t, r, 200, "")
			var ids []string
			for _, rs := range r.get("rrsets").([]any) {
				ids = append(ids, rs.(map[string]any)["id"].(string))
			}
			if got := strings.Join(ids, " "); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	if r := do(t, s, "GET", zpath+"/rrsets?per_page=100", nil); r.num("meta.pagination.per_page") != 100 {
		t.Errorf("per_page 100 allowed for rrsets: %s", r.raw)
	}
	if r := do(t, s, "GET", zpath+"/rrsets?per_page=101", nil); r.num("meta.pagination.per_page") != 100 {
		t.Errorf("per_page clamps at 100: %s", r.raw)
	}
	for _, q := range []string{"type=A,AAAA", "type=SPF", "sort=ttl", "label_selector=x+in+()"} {
		want(t, do(t, s, "GET", zpath+"/rrsets?"+q, nil), 422, CodeInvalidInput)
	}
}

func TestRecordActions(t *testing.T) {
	s, _ := newPrimary(t, nil)
	act := func(name, typ, action string, body any) resp {
		return do(t, s, "POST", zpath+"/rrsets/"+name+"/"+typ+"/actions/"+action, body)
	}
	r := act("www", "A", "add_records", map[string]any{"records": recs("192.0.2.1"), "ttl": 600})
	want(t, r, 201, "")
	rs, ok := s.RRSet("example.com", "www", "A")
	if !ok || *rs.TTL != 600 || len(rs.Records) != 1 {
		t.Fatalf("add_records did not create: %+v", rs)
	}
	want(t, act("www", "A", "add_records", map[string]any{"records": recs("192.0.2.1", "192.0.2.2")}), 201, "")
	want(t, act("www", "A", "add_records", map[string]any{"records": recs("192.0.2.9", "192.0.2.9")}), 422, CodeInvalidInput)
	rs, _ = s.RRSet("example.com", "www", "A")
	if len(rs.Records) != 2 || *rs.TTL != 600 {
		t.Errorf("after add %+v", rs)
	}
	r = act("www", "A", "update_records", map[string]any{"records": []Record{{Value: "192.0.2.2", Comment: "two"}}})
	want(t, r, 200, "")
	want(t, act("www", "A", "update_records", map[string]any{"records": []Record{{Value: "192.0.2.7"}}}), 422,
		CodeInvalidInput)
	if rs, _ = s.RRSet("example.com", "www", "A"); rs.Records[1].Comment != "two" {
		t.Errorf("comment %+v", rs.Records)
	}
	want(t, act("www", "A", "set_records", map[string]any{"records": recs("192.0.2.5")}), 201, "")
	want(t, act("www", "A", "set_records", map[string]any{"records": []Record{}}), 422, CodeInvalidInput)
	want(t, act("www", "A", "change_ttl", map[string]any{"ttl": nil}), 201, "")
	if rs, _ = s.RRSet("example.com", "www", "A"); rs.TTL != nil || rs.Records[0].Value != "192.0.2.5" {
		t.Errorf("after set/change_ttl %+v", rs)
	}
	want(t, act("www", "A", "remove_records", map[string]any{"records": recs("192.0.2.99")}), 201, "")
	want(t, act("www", "A", "remove_records", map[string]any{"records": recs("192.0.2.5")}), 201, "")
	if _, ok := s.RRSet("example.com", "www", "A"); ok {
		t.Error("emptied rrset must be deleted")
	}
	for _, a := range []string{"set_records", "update_records", "remove_records", "change_ttl", "change_protection"} {
		want(t, act("gone", "A", a, map[string]any{"records": recs("192.0.2.1"), "ttl": 60}), 404, CodeNotFound)
	}
	want(t, do(t, s, "DELETE", zpath+"/rrsets/gone/A", nil), 404, CodeNotFound)
	want(t, do(t, s, "PUT", zpath+"/rrsets/gone/A", map[string]any{}), 404, CodeNotFound)
}

func TestRRSetProtection(t *testing.T) {
	s, _ := newPrimary(t, nil)
	mustRRSet(t, s, "example.com", RRSetSeed{Name: "www", Type: "A", Records: recs("192.0.2.1"), ChangeProtected: true})
	body := map[string]any{"records": recs("192.0.2.1"), "ttl": 600}
	for _, a := range []string{"add_records", "remove_records", "set_records", "update_records", "change_ttl"} {
		want(t, do(t, s, "POST", zpath+"/rrsets/www/A/actions/"+a, body), 423, CodeProtected)
	}
	want(t, do(t, s, "DELETE", zpath+"/rrsets/www/A", nil), 423, CodeProtected)
	want(t, do(t, s, "POST", zpath+"/actions/import_zonefile", map[string]any{"zonefile": minimalZonefile}),
		423, CodeProtected)
	r := do(t, s, "PUT", zpath+"/rrsets/www/A", map[string]any{"labels": map[string]string{"x": "y"}})
	want(t, r, 200, "")
	if r.str("rrset.labels.x") != "y" {
		t.Errorf("labels %s", r.raw)
	}
	want(t, do(t, s, "POST", zpath+"/rrsets/www/A/actions/change_protection", map[string]any{"change": false}), 201, "")
	want(t, do(t, s, "DELETE", zpath+"/rrsets/www/A", nil), 201, "")
}

func TestHetznerRecordsStay(t *testing.T) {
	s, _ := newPrimary(t, nil)
	ns := zpath + "/rrsets/@/NS"
	want(t, do(t, s, "POST", ns+"/actions/remove_records", map[string]any{"records": recs("oxygen.ns.hetzner.com.")}),
		422, CodeInvalidInput)
	want(t, do(t, s, "POST", ns+"/actions/set_records", map[string]any{"records": recs("ns1.example.net.")}),
		422, CodeInvalidInput)
	want(t, do(t, s, "DELETE", ns, nil), 422, CodeInvalidInput)
	want(t, do(t, s, "DELETE", zpath+"/rrsets/@/SOA", nil), 422, CodeInvalidInput)
	want(t, do(t, s, "POST", ns+"/actions/add_records", map[string]any{"records": recs("ns1.example.net.")}), 201, "")
	want(t, do(t, s, "POST", ns+"/actions/remove_records", map[string]any{"records": recs("ns1.example.net.")}), 201, "")
	want(t, do(t, s, "POST", zpath+"/rrsets/@/SOA/actions/add_records",
		map[string]any{"records": recs(soaPrefix + "0" + soaTail)}), 422, CodeInvalidInput)
}

func TestSOASerialIsManaged(t *testing.T) {
	s, _ := newPrimary(t, nil)
	serial := func() string {
		rs, _ := s.RRSet("example.com", "@", "SOA")
		return strings.Fields(rs.Records[0].Value)[2]
	}
	before := serial()
	want(t, do(t, s, "POST", zpath+"/rrsets/www/A/actions/add_records", map[string]any{"records": recs("192.0.2.1")}),
		201, "")
	after := serial()
	if len(before) != 10 || after <= before {
		t.Errorf("serial %s -> %s", before, after)
	}
	want(t, do(t, s, "POST", zpath+"/rrsets/@/SOA/actions/set_records",
		map[string]any{"records": recs(soaPrefix + "0" + soaTail)}), 201, "")
	if got := serial(); got == "0" || got <= after {
		t.Errorf("serial after writing 0: %s", got)
	}
}
