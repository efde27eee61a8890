package localzone

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	mdns "github.com/miekg/dns"
)

func TestDefaultDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_DATA_HOME": "/x/data", "HOME": "/home/u"}, "/x/data/bulwark/zones"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/share/bulwark/zones"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/bulwark/zones"},
		{map[string]string{}, ""},
	}
	for _, c := range cases {
		if got := DefaultDir(env(c.env)); got != c.want {
			t.Errorf("DefaultDir(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []*Options{
		{Nameservers: []string{"ns1.example.com"}},
		{Nameservers: []string{"bad name."}},
		{Hostmaster: "hostmaster"},
	} {
		if _, err := New(t.TempDir(), o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
	if _, err := New("", nil); err == nil {
		t.Error("New with an empty directory succeeded")
	}
	p, err := New(t.TempDir(), nil)
	if err != nil || p.Name() != "local" {
		t.Fatalf("New(nil opts) = %v, %v", p, err)
	}
}

func TestCreateZone(t *testing.T) {
	p, _ := newTestProvider(t, "")
	ttl := 600
	z, a, err := p.CreateZone(bg, dns.CreateZoneRequest{Name: "Example.COM.", TTL: &ttl, Labels: map[string]string{"env": "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	if z.Name != "example.com" || z.Mode != dns.ModePrimary || z.TTL != 600 || z.RecordCount != 2 || z.Status != "ok" || z.ID != 1 {
		t.Errorf("zone = %+v", z)
	}
	if got := z.AuthoritativeNameservers.Assigned; len(got) != 1 || got[0] != "localhost." {
		t.Errorf("assigned = %v", got)
	}
	if a.Status != dns.ActionSuccess || a.Progress != 100 || a.Finished == nil || a.Resources[0].ID != z.ID {
		t.Errorf("action = %+v", a)
	}
	text, err := os.ReadFile(filepath.Join(p.Dir(), "example.com.zone"))
	if err != nil {
		t.Fatal(err)
	}
	// Readable by a standard parser: $ORIGIN, $TTL and the SOA first.
	zp := mdns.NewZoneParser(strings.NewReader(string(text)), "", "")
	rr, ok := zp.Next()
	if !ok || rr.Header().Rrtype != mdns.TypeSOA || rr.Header().Name != "example.com." || rr.Header().Ttl != 600 {
		t.Fatalf("first record = %v (%v)", rr, zp.Err())
	}
	if soa := rr.(*mdns.SOA); soa.Serial != 2026031401 || soa.Ns != "localhost." || soa.Mbox != "hostmaster.example.com." {
		t.Errorf("soa = %v", soa)
	}
	_, err = p.GetZone(bg, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"1", "example.com", "EXAMPLE.com."} {
		if got, err := p.GetZone(bg, ref); err != nil || got.ID != 1 {
			t.Errorf("GetZone(%q) = %v, %v", ref, got.ID, err)
		}
	}
	_, _, err = p.CreateZone(bg, dns.CreateZoneRequest{Name: "example.com"})
	wantCode(t, err, 409, "uniqueness_error")
}

func TestCreateZoneInvalid(t *testing.T) {
	p, _ := newTestProvider(t, "")
	bad := 30
	cases := []struct {
		req   dns.CreateZoneRequest
		field string
	}{
		{dns.CreateZoneRequest{Name: ""}, "name"},
		{dns.CreateZoneRequest{Name: "bad name.com"}, "name"},
		{dns.CreateZoneRequest{Name: "../etc"}, "name"},
		{dns.CreateZoneRequest{Name: "12345"}, "name"},
		{dns.CreateZoneRequest{Name: "a.com", Mode: "tertiary"}, "mode"},
		{dns.CreateZoneRequest{Name: "a.com", TTL: &bad}, "ttl"},
		{dns.CreateZoneRequest{Name: "a.com", Labels: map[string]string{"-x": "y"}}, "labels"},
		{dns.CreateZoneRequest{Name: "a.com", Labels: map[string]string{"hetzner.cloud/x": "y"}}, "labels"},
		{dns.CreateZoneRequest{Name: "a.com", Mode: dns.ModeSecondary}, "primary_nameservers"},
		{dns.CreateZoneRequest{Name: "a.com", Mode: dns.ModeSecondary, PrimaryNameservers: []dns.PrimaryNameserver{{Address: "nope"}}}, "primary_nameservers[0].address"},
		{dns.CreateZoneRequest{Name: "a.com", PrimaryNameservers: []dns.PrimaryNameserver{{Address: "192.0.2.1"}}}, "primary_nameservers"},
		{dns.CreateZoneRequest{Name: "a.com", Zonefile: "$ORIGIN b.com.\n"}, "zonefile"},
	}
	for _, c := range cases {
		_, _, err := p.CreateZone(bg, c.req)
		de := wantCode(t, err, 422, "invalid_input")
		if de.Fields[0].Name != c.field {
			t.Errorf("CreateZone(%+v): field %q, want %q", c.req, de.Fields[0].Name, c.field)
		}
	}
}

func TestCreateZoneFromZonefile(t *testing.T) {
	p, _ := newTestProvider(t, "")
	zf := "$ORIGIN a.test.\n$TTL 900\nwww 300 IN A 192.0.2.1 ; web\n"
	z, _, err := p.CreateZone(bg, dns.CreateZoneRequest{Name: "a.test", Zonefile: zf})
	if err != nil {
		t.Fatal(err)
	}
	if z.TTL != 900 || z.RecordCount != 3 {
		t.Errorf("zone = %+v", z)
	}
	s, err := p.GetRRSet(bg, "a.test", "www", "A")
	if err != nil || *s.TTL != 300 || s.Records[0].Comment != "web" {
		t.Errorf("www/A = %+v, %v", s, err)
	}
}

func TestDeleteZone(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	if _, err := p.ChangeZoneProtection(bg, "a.test", true); err != nil {
		t.Fatal(err)
	}
	_, err := p.DeleteZone(bg, "a.test")
	wantCode(t, err, 423, "protected")
	if _, err := p.ChangeZoneProtection(bg, "a.test", false); err != nil {
		t.Fatal(err)
	}
	a, err := p.DeleteZone(bg, "1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.GetZone(bg, "a.test")
	wantCode(t, err, 404, "not_found")
	if got, err := p.GetAction(bg, a.ID); err != nil || got.Command != "delete_zone" {
		t.Errorf("GetAction(delete) = %+v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(p.Dir(), "a.test.meta.json")); !os.IsNotExist(err) {
		t.Errorf("sidecar left behind: %v", err)
	}
	_, err = p.DeleteZone(bg, "a.test")
	wantCode(t, err, 404, "not_found")
	// The name is free again, and the new zone gets a new id.
	if z := mustZone(t, p, "a.test"); z.ID != 2 {
		t.Errorf("recreated zone id = %d, want 2", z.ID)
	}
}

func TestUpdateZoneAndTTL(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	z, err := p.UpdateZone(bg, "a.test", map[string]string{"team": "infra", "example.org/tier": ""})
	if err != nil || z.Labels["team"] != "infra" {
		t.Fatalf("UpdateZone = %+v, %v", z, err)
	}
	z, _ = p.UpdateZone(bg, "a.test", map[string]string{"x": "1"})
	if len(z.Labels) != 1 {
		t.Errorf("labels not replaced: %v", z.Labels)
	}
	_, err = p.UpdateZone(bg, "a.test", map[string]string{"x": strings.Repeat("v", 64)})
	wantCode(t, err, 422, "invalid_input")
	if _, err := p.ChangeZoneTTL(bg, "a.test", 120); err != nil {
		t.Fatal(err)
	}
	if z, _ := p.GetZone(bg, "a.test"); z.TTL != 120 {
		t.Errorf("ttl = %d", z.TTL)
	}
	_, err = p.ChangeZoneTTL(bg, "a.test", 59)
	wantCode(t, err, 422, "invalid_input")
	_, err = p.ChangeZoneTTL(bg, "nope.test", 120)
	wantCode(t, err, 404, "not_found")
}

func TestSecondaryZone(t *testing.T) {
	p, _ := newTestProvider(t, "")
	prim := []dns.PrimaryNameserver{{Address: "192.0.2.53", TSIGKey: "c2VjcmV0", TSIGAlgorithm: "hmac-sha256"}}
	z, _, err := p.CreateZone(bg, dns.CreateZoneRequest{Name: "sec.test", Mode: dns.ModeSecondary, PrimaryNameservers: prim})
	if err != nil {
		t.Fatal(err)
	}
	if z.Mode != dns.ModeSecondary || z.PrimaryNameservers[0].Port != 53 || z.RecordCount != 0 {
		t.Errorf("zone = %+v", z)
	}
	if _, err := os.Stat(filepath.Join(p.Dir(), "sec.test.zone")); !os.IsNotExist(err) {
		t.Error("a secondary zone got a zone file")
	}
	ops := map[string]error{}
	_, ops["list"] = p.ListRRSets(bg, "sec.test", dns.ListRRSetsOptions{})
	_, ops["get"] = p.GetRRSet(bg, "sec.test", "@", "SOA")
	_, _, ops["create"] = p.CreateRRSet(bg, "sec.test", dns.CreateRRSetRequest{Name: "www", Type: "A", Records: recs("192.0.2.1")})
	_, ops["add"] = p.AddRecords(bg, "sec.test", "www", "A", recs("192.0.2.1"), nil)
	_, ops["export"] = p.ExportZonefile(bg, "sec.test")
	_, ops["import"] = p.ImportZonefile(bg, "sec.test", "")
	_, ops["ttl"] = p.ChangeZoneTTL(bg, "sec.test", 300)
	for op, err := range ops {
		t.Run(op, func(t *testing.T) { wantCode(t, err, 422, "incorrect_zone_mode") })
	}
	if _, err := p.ChangePrimaryNameservers(bg, "sec.test", []dns.PrimaryNameserver{{Address: "2001:db8::53", Port: 5353}}); err != nil {
		t.Fatal(err)
	}
	if z, _ := p.GetZone(bg, "sec.test"); z.PrimaryNameservers[0].Address != "2001:db8::53" {
		t.Errorf("primaries = %+v", z.PrimaryNameservers)
	}
	mustZone(t, p, "prim.test")
	_, err = p.ChangePrimaryNameservers(bg, "prim.test", prim)
	wantCode(t, err, 422, "incorrect_zone_mode")
	_, _, err = p.CreateZone(bg, dns.CreateZoneRequest{Name: "sec.test"})
	wantCode(t, err, 409, "uniqueness_error")
	if _, err := p.DeleteZone(bg, "sec.test"); err != nil {
		t.Fatal(err)
	}
	_, err = p.GetZone(bg, "sec.test")
	wantCode(t, err, 404, "not_found")
}

func TestListZones(t *testing.T) {
	p, clk := newTestProvider(t, "")
	for i, n := range []string{"c.test", "a.test", "b.test"} {
		clk.set(clk.now().Add(1))
		z := mustZone(t, p, n)
		if _, err := p.UpdateZone(bg, n, map[string]string{"i": string(rune('0' + i)), "env": "prod"}); err != nil || z.ID != int64(i+1) {
			t.Fatal(err)
		}
	}
	clk.set(clk.now().Add(1))
	if _, _, err := p.CreateZone(bg, dns.CreateZoneRequest{Name: "s.test", Mode: dns.ModeSecondary, PrimaryNameservers: []dns.PrimaryNameserver{{Address: "192.0.2.1"}}}); err != nil {
		t.Fatal(err)
	}
	names := func(l dns.ZoneList) string {
		var s []string
		for _, z := range l.Zones {
			s = append(s, z.Name)
		}
		return strings.Join(s, ",")
	}
	cases := []struct {
		opts dns.ListZonesOptions
		want string
	}{
		{dns.ListZonesOptions{}, "c.test,a.test,b.test,s.test"},
		{dns.ListZonesOptions{Sort: []string{"name"}}, "a.test,b.test,c.test,s.test"},
		{dns.ListZonesOptions{Sort: []string{"name:desc"}}, "s.test,c.test,b.test,a.test"},
		{dns.ListZonesOptions{Sort: []string{"created:desc"}}, "s.test,b.test,a.test,c.test"},
		{dns.ListZonesOptions{Name: "B.test."}, "b.test"},
		{dns.ListZonesOptions{Mode: "secondary"}, "s.test"},
		{dns.ListZonesOptions{LabelSelector: "env=prod,i in (0, 2)"}, "c.test,b.test"},
		{dns.ListZonesOptions{LabelSelector: "!env"}, "s.test"},
		{dns.ListZonesOptions{PerPage: 3, Page: 2}, "s.test"},
	}
	for _, c := range cases {
		l, err := p.ListZones(bg, c.opts)
		if err != nil || names(l) != c.want {
			t.Errorf("ListZones(%+v) = %s, %v; want %s", c.opts, names(l), err, c.want)
		}
	}
	l, _ := p.ListZones(bg, dns.ListZonesOptions{PerPage: 3})
	pg := l.Pagination
	if pg.Page != 1 || pg.PerPage != 3 || pg.PreviousPage != nil || *pg.NextPage != 2 || *pg.LastPage != 2 || *pg.TotalEntries != 4 {
		t.Errorf("pagination = %+v", pg)
	}
	if l, _ := p.ListZones(bg, dns.ListZonesOptions{PerPage: 500}); l.Pagination.PerPage != 50 {
		t.Errorf("per_page not clamped: %d", l.Pagination.PerPage)
	}
	for _, o := range []dns.ListZonesOptions{{Sort: []string{"ttl"}}, {LabelSelector: "a in b"}, {Mode: "x"}, {Page: -1}} {
		_, err := p.ListZones(bg, o)
		wantCode(t, err, 422, "invalid_input")
	}
}
