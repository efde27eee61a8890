package hetznerapi

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const minimalZonefile = `$ORIGIN example.com.
$TTL 7200
; standalone comment, dropped
@	IN	SOA	hydrogen.ns.hetzner.com. dns.hetzner.com. 2024010101 86400 10800 3600000 3600
@	IN	NS	hydrogen.ns.hetzner.com.
@	IN	NS	oxygen.ns.hetzner.com.
@	IN	NS	helium.ns.hetzner.de.
www	300	IN	A	192.0.2.1 ; web server
www	300	IN	A	192.0.2.2
mail		IN	MX	10 mx.example.net.
txt		IN	TXT	"v=spf1 -all" ; spf
`

func TestParseZonefile(t *testing.T) {
	p, err := ParseZonefile(minimalZonefile, "example.com", 3600)
	if err != nil {
		t.Fatal(err)
	}
	if p.TTL == nil || *p.TTL != 7200 || len(p.RRSets) != 5 {
		t.Fatalf("parsed %+v", p)
	}
	www := p.RRSets["www/A"]
	if *www.TTL != 300 || www.Records[0].Comment != "web server" || www.Records[1].Comment != "" {
		t.Errorf("www %+v", www)
	}
	if p.RRSets["mail/MX"].TTL != nil || p.RRSets["txt/TXT"].Records[0].Value != `"v=spf1 -all"` {
		t.Errorf("mail/txt %+v %+v", p.RRSets["mail/MX"], p.RRSets["txt/TXT"])
	}
}

func TestImportRules(t *testing.T) {
	head := "@ IN SOA hydrogen.ns.hetzner.com. dns.hetzner.com. 1 86400 10800 3600000 3600\n" +
		"@ IN NS hydrogen.ns.hetzner.com.\n@ IN NS oxygen.ns.hetzner.com.\n@ IN NS helium.ns.hetzner.de.\n"
	cases := []struct{ name, text, wantErr string }{
		{"ok without directives", head, ""},
		{"origin ok", "$ORIGIN example.com.\n" + head, ""},
		{"wrong origin", "$ORIGIN example.org.\n" + head, "$ORIGIN"},
		{"origin without dot", "$ORIGIN example.com\n" + head, "$ORIGIN"},
		{"bad $TTL", "$TTL 30\n" + head, "$TTL"},
		{"include", "$INCLUDE /etc/passwd\n" + head, "not supported"},
		{"class CH", head + "www CH A 192.0.2.1\n", "class"},
		{"no soa", strings.SplitN(head, "\n", 2)[1], "SOA"},
		{"two soa", head + "@ IN SOA a.example.com. b.example.com. 1 2 3 4 5\n", "SOA"},
		{"missing hetzner ns", strings.Replace(head, "@ IN NS oxygen.ns.hetzner.com.\n", "", 1), "oxygen"},
		{"outside zone", head + "www.example.org. IN A 192.0.2.1\n", "outside"},
		{"unsupported type", head + "x IN SPF \"v=spf1\"\n", "unsupported type"},
		{"low ttl", head + "x 30 IN A 192.0.2.1\n", "TTL"},
		{"syntax", head + "x IN A 999.1.1.1\n", "invalid zone file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseZonefile(c.text, "example.com", 3600)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("err %v, want %q", err, c.wantErr)
			}
		})
	}
}

func TestImportZonefileEndpoint(t *testing.T) {
	s, _ := newPrimary(t, nil)
	mustRRSet(t, s, "example.com", RRSetSeed{Name: "old", Type: "A", Records: recs("192.0.2.9")})
	want(t, do(t, s, "POST", zpath+"/actions/import_zonefile", map[string]any{}), 422, CodeInvalidInput)
	want(t, do(t, s, "POST", zpath+"/actions/import_zonefile", map[string]any{"zonefile": "$ORIGIN x.com.\n"}),
		422, CodeInvalidInput)
	want(t, do(t, s, "POST", zpath+"/actions/import_zonefile", map[string]any{"zonefile": minimalZonefile}), 201, "")
	if _, ok := s.RRSet("example.com", "old", "A"); ok {
		t.Error("import must replace all rrsets")
	}
	z, _ := s.Zone("example.com")
	if z.TTL != 7200 || z.RecordCount != 4+4 {
		t.Errorf("zone %+v", z)
	}
	r := do(t, s, "POST", "/zones", map[string]any{"name": "example.org", "mode": "primary",
		"zonefile": strings.ReplaceAll(minimalZonefile, "example.com.", "example.org.")})
	want(t, r, 201, "")
	if r.num("zone.record_count") != 8 || r.num("zone.ttl") != 7200 {
		t.Errorf("create with zonefile %s", r.raw)
	}
}

func TestExportRoundTrip(t *testing.T) {
	s, _ := newPrimary(t, nil)
	seeds := []RRSetSeed{
		{Name: "www", Type: "A", TTL: ttlp(300), Records: []Record{{Value: "192.0.2.1", Comment: " web; main;;x ; "}}},
		{Name: "*", Type: "AAAA", Records: recs("2001:db8::1")},
		{Name: "*.sub", Type: "CNAME", Records: recs("www.example.com.")},
		{Name: "@", Type: "MX", Records: recs("10 mx1.example.net.", "20 mx2.example.net.")},
		{Name: "_dmarc", Type: "TXT", Records: recs(`"v=DMARC1; p=none"`, `"a" "b"`)},
		{Name: "@", Type: "CAA", TTL: ttlp(86400), Records: recs(`0 issue "letsencrypt.org"`)},
	}
	for _, sd := range seeds {
		mustRRSet(t, s, "example.com", sd)
	}
	before := s.RRSets("example.com")
	r := do(t, s, "GET", zpath+"/zonefile", nil)
	want(t, r, 200, "")
	text := r.str("zonefile")
	if !strings.HasPrefix(text, "$ORIGIN example.com.\n$TTL 3600\n@\t\tIN\tSOA\t") {
		t.Fatalf("export:\n%s", text)
	}
	want(t, do(t, s, "POST", zpath+"/actions/import_zonefile", map[string]any{"zonefile": text}), 201, "")
	after := s.RRSets("example.com")
	noSerial := cmp.Transformer("noSerial", func(r RRSet) RRSet {
		if r.Type == "SOA" {
			r.Records = nil
		}
		return r
	})
	if d := cmp.Diff(before, after, noSerial); d != "" {
		t.Errorf("round trip changed state (-before +after):\n%s", d)
	}
	if again := do(t, s, "GET", zpath+"/zonefile", nil).str("zonefile"); again == text {
		t.Error("the import must bump the SOA serial")
	}
}

func FuzzParseZonefile(f *testing.F) {
	f.Add(minimalZonefile)
	f.Add("$TTL 60\n@ IN SOA a. b. 1 2 3 4 5\n")
	f.Add("@ SOA hydrogen.ns.hetzner.com. dns.hetzner.com. 1 2 3 4 5\n@ NS hydrogen.ns.hetzner.com.\n" +
		"@ NS oxygen.ns.hetzner.com.\n@ NS helium.ns.hetzner.de.\n* TXT \"a;b\" ; c;d\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseZonefile(text, "example.com", 3600)
		if err != nil {
			if !errors.Is(err, ErrZonefile) {
				t.Fatalf("error %v does not wrap ErrZonefile", err)
			}
			return
		}
		if _, ok := p.RRSets["@/SOA"]; !ok {
			t.Fatal("accepted a zone file without SOA")
		}
		ttl := 3600
		if p.TTL != nil {
			ttl = *p.TTL
		}
		var sets []RRSet
		for _, id := range sortedKeys(p.RRSets) {
			sets = append(sets, p.RRSets[id])
		}
		again, err := ParseZonefile(ExportZonefile("example.com", ttl, sets), "example.com", ttl)
		if err != nil {
			t.Fatalf("export of an accepted file does not re-import: %v", err)
		}
		if d := cmp.Diff(p.RRSets, again.RRSets); d != "" {
			t.Fatalf("round trip differs:\n%s", d)
		}
	})
}

func FuzzCheckTXT(f *testing.F) {
	for _, s := range []string{`"v=spf1 -all"`, `"a" "b"`, `"a\"b"`, `"\065\\"`, `"x`, `x`, `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		chunks, err := splitTXT(s)
		if err != nil {
			return
		}
		var b strings.Builder
		for i, c := range chunks {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteByte('"')
			for _, ch := range []byte(c) {
				if ch == '"' || ch == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(ch)
			}
			b.WriteByte('"')
		}
		again, err := splitTXT(b.String())
		if err != nil || !slices.Equal(chunks, again) {
			t.Fatalf("requoted %q -> %q (%v), want %q", b.String(), again, err, chunks)
		}
	})
}
