package localzone

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

var serialRE = regexp.MustCompile(`(SOA\t\S+ \S+ )(\d+)`)

func dropSerial(s string) string { return serialRE.ReplaceAllString(s, "${1}N") }

const importText = `; standalone comments are dropped
$ORIGIN a.test.
$TTL 7200
@        IN SOA  localhost. admin.a.test. 5 3600 600 86400 300
@        IN NS   localhost.
@        IN NS   ns2.example.net. ; secondary
www  300 IN A    192.0.2.1 ; web one
www  300 IN A    192.0.2.2
api      IN CNAME www
@        IN MX   10 mail
@        IN TXT  "v=spf1 -all" ; spf
*.dev    IN AAAA 2001:db8::1
_sip._tcp IN SRV 10 5 5060 sip.example.net.
`

func TestImportExportRoundTrip(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	if _, err := p.UpdateRRSet(bg, "a.test", "@", "NS", map[string]string{"keep": "me"}); err != nil {
		t.Fatal(err)
	}
	a, err := p.ImportZonefile(bg, "a.test", importText)
	if err != nil {
		t.Fatal(err)
	}
	if a.Command != "import_zonefile" {
		t.Errorf("action %+v", a)
	}
	z, _ := p.GetZone(bg, "a.test")
	if z.TTL != 7200 || z.RecordCount != 10 {
		t.Errorf("zone = ttl %d, %d records", z.TTL, z.RecordCount)
	}
	www, _ := p.GetRRSet(bg, "a.test", "www", "A")
	if *www.TTL != 300 || www.Records[0].Comment != "web one" {
		t.Errorf("www/A = %+v", www)
	}
	api, _ := p.GetRRSet(bg, "a.test", "api", "CNAME")
	if api.TTL != nil || api.Records[0].Value != "www.a.test." {
		t.Errorf("api/CNAME = %+v", api)
	}
	if ns, _ := p.GetRRSet(bg, "a.test", "@", "NS"); ns.Labels["keep"] != "me" || ns.Records[1].Comment != "secondary" {
		t.Errorf("@/NS = %+v", ns)
	}
	soa, _ := p.GetRRSet(bg, "a.test", "@", "SOA")
	if !strings.HasPrefix(soa.Records[0].Value, "localhost. admin.a.test. 2026031402 ") {
		t.Errorf("SOA = %q: imported fields kept, serial managed", soa.Records[0].Value)
	}
	first, err := p.ExportZonefile(bg, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ImportZonefile(bg, "a.test", first); err != nil {
		t.Fatal(err)
	}
	again, _ := p.ExportZonefile(bg, "a.test")
	if dropSerial(first) != dropSerial(again) {
		t.Errorf("export not stable:\n%s\n---\n%s", first, again)
	}
	if first == again {
		t.Error("serial did not change across an import")
	}
	disk, _ := os.ReadFile(filepath.Join(p.Dir(), "a.test.zone"))
	if string(disk) != again {
		t.Errorf("zone file differs from export")
	}
}

func TestImportRules(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	soa := "@ IN SOA localhost. h.a.test. 1 2 3 4 5\n"
	ns := "@ IN NS localhost.\n"
	cases := map[string]string{
		"origin":      "$ORIGIN b.test.\n" + soa + ns,
		"sub origin":  "$ORIGIN x.a.test.\n" + soa + ns,
		"no soa":      ns + "www IN A 192.0.2.1\n",
		"no ns":       soa + "www IN A 192.0.2.1\n",
		"other ns":    soa + "@ IN NS ns1.example.net.\n",
		"class CH":    soa + ns + "www CH A 192.0.2.1\n",
		"type":        soa + ns + "www IN LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m\n",
		"ttl":         soa + ns + "www 30 IN A 192.0.2.1\n",
		"$ttl":        "$TTL 10\n" + soa + ns,
		"outside":     soa + ns + "www.b.test. IN A 192.0.2.1\n",
		"syntax":      soa + ns + "www IN A 192.0.2.300\n",
		"include":     "$INCLUDE /etc/passwd\n" + soa + ns,
		"cname":       soa + ns + "x IN CNAME y\nx IN A 192.0.2.1\n",
		"upper owner": soa + ns + "W_W-W! IN A 192.0.2.1\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			de := wantCode(t, second(p.ImportZonefile(bg, "a.test", text)), 422, "invalid_input")
			if de.Fields[0].Name != "zonefile" {
				t.Errorf("field = %s", de.Fields[0].Name)
			}
		})
	}
	de := wantCode(t, second(p.ImportZonefile(bg, "a.test", soa+ns+"www IN A 192.0.2.300\n")), 422, "invalid_input")
	if !strings.Contains(de.Message, "line: 3") {
		t.Errorf("message lacks the line: %q", de.Message)
	}
	if _, err := p.ImportZonefile(bg, "a.test", soa+ns+"WWW IN A 192.0.2.1\n"); err != nil {
		t.Errorf("upper-case owner (DNS is case-blind): %v", err)
	}
}

func TestSerial(t *testing.T) {
	day := time.Date(2026, 3, 14, 23, 0, 0, 0, time.UTC)
	cases := []struct {
		old, want uint32
	}{
		{0, 2026031401},
		{2026031301, 2026031401},
		{2026031401, 2026031402},
		{2026031499, 2026031500},
		{4000000000, 4000000001},
		{4294967295, 1}, // wraps past 0; RFC 1982 arithmetic calls 1 newer
	}
	for _, c := range cases {
		if got := nextSerial(c.old, day); got != c.want {
			t.Errorf("nextSerial(%d) = %d, want %d", c.old, got, c.want)
		}
	}
}

func TestSerialRises(t *testing.T) {
	p, clk := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	serial := func() string {
		s, _ := p.GetRRSet(bg, "a.test", "@", "SOA")
		return strings.Fields(s.Records[0].Value)[2]
	}
	prev := serial()
	for i := range 3 {
		if _, err := p.AddRecords(bg, "a.test", "r", "TXT", recs(`"`+fmtInt(i)+`"`), nil); err != nil {
			t.Fatal(err)
		}
		if s := serial(); s <= prev {
			t.Fatalf("serial %s after %s", s, prev)
		} else {
			prev = s
		}
	}
	if prev != "2026031404" {
		t.Errorf("after 4 changes on one day serial = %s", prev)
	}
	// Past 99 changes a day it runs into the next day's numbers.
	if _, err := p.SetRecords(bg, "a.test", "@", "SOA", recs("localhost. h.a.test. 2026031499 1 2 3 4")); err != nil {
		t.Fatal(err)
	}
	if s := serial(); s != "2026031500" {
		t.Errorf("serial = %s, want 2026031500", s)
	}
	// A user-set serial above the clock's keeps rising from there.
	if _, err := p.SetRecords(bg, "a.test", "@", "SOA", recs("localhost. h.a.test. 2099010100 1 2 3 4")); err != nil {
		t.Fatal(err)
	}
	if s := serial(); s != "2099010101" {
		t.Errorf("serial = %s, want 2099010101", s)
	}
	// Setting a lower one does not move it back.
	clk.set(clk.now().Add(48 * time.Hour))
	if _, err := p.SetRecords(bg, "a.test", "@", "SOA", recs("localhost. h.a.test. 1 1 2 3 4")); err != nil {
		t.Fatal(err)
	}
	if s := serial(); s != "2099010102" {
		t.Errorf("serial = %s, want 2099010102", s)
	}
	// Labels and protection do not touch the zone file.
	before, _ := os.ReadFile(filepath.Join(p.Dir(), "a.test.zone"))
	if _, err := p.ChangeRRSetProtection(bg, "a.test", "r", "TXT", true); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(p.Dir(), "a.test.zone"))
	if string(before) != string(after) {
		t.Error("a protection change rewrote the zone file")
	}
}

func TestParseTTLText(t *testing.T) {
	for in, want := range map[string]int{"3600": 3600, "1h": 3600, "1h30m": 5400, "2d": 172800, "1w": 604800, "90s": 90} {
		if got, ok := parseTTLText(in); !ok || got != want {
			t.Errorf("parseTTLText(%q) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "h", "1x", "-5", "99999999999"} {
		if _, ok := parseTTLText(in); ok {
			t.Errorf("parseTTLText(%q) accepted", in)
		}
	}
}

func TestExternalEdits(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	path := filepath.Join(p.Dir(), "a.test.zone")
	text, _ := os.ReadFile(path)
	edited := string(text) + "added 600 IN A 192.0.2.77 ; by hand\n"
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := p.GetRRSet(bg, "a.test", "added", "A")
	if err != nil || *s.TTL != 600 || s.Records[0].Comment != "by hand" {
		t.Fatalf("hand-added rrset = %+v, %v", s, err)
	}
	// A mutation keeps the hand edit.
	if _, err := p.AddRecords(bg, "a.test", "www", "A", recs("192.0.2.1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetRRSet(bg, "a.test", "added", "A"); err != nil {
		t.Fatalf("hand edit lost: %v", err)
	}

	// A broken file is reported, listed as status error, and never overwritten.
	text, _ = os.ReadFile(path)
	broken := string(text) + "bad IN A not-an-address\n"
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(broken, "\n")
	de := wantCode(t, second(p.GetZone(bg, "a.test")), 422, CodeInvalidZonefile)
	if !strings.Contains(de.Message, "line: "+itoaTest(line)) || len(de.Message) > maxMessage+3 {
		t.Errorf("message = %q, want line %d", de.Message, line)
	}
	for _, err := range []error{
		second(p.AddRecords(bg, "a.test", "www", "A", recs("192.0.2.2"), nil)),
		second(p.ImportZonefile(bg, "a.test", importText)),
		second(p.ChangeZoneTTL(bg, "a.test", 300)),
		second(p.DeleteZone(bg, "a.test")),
		second(p.ExportZonefile(bg, "a.test")),
		second(p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{})),
	} {
		wantCode(t, err, 422, CodeInvalidZonefile)
	}
	if got, _ := os.ReadFile(path); string(got) != broken {
		t.Error("a broken zone file was overwritten")
	}
	l, err := p.ListZones(bg, dns.ListZonesOptions{})
	if err != nil || l.Zones[0].Status != "error" {
		t.Errorf("ListZones = %+v, %v", l, err)
	}
	if _, err := p.ChangeZoneProtection(bg, "a.test", true); err != nil {
		t.Errorf("protection (sidecar only) on a broken zone: %v", err)
	}
}

func TestAdoptDroppedZoneFile(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "first.test")
	text := "$TTL 300\n@ IN SOA ns.hand.test. h.hand.test. 7 1 2 3 4\n@ IN NS ns.hand.test.\nwww IN A 192.0.2.1\n"
	if err := os.WriteFile(filepath.Join(p.Dir(), "hand.test.zone"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Dir(), "not a zone.zone"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := p.ListZones(bg, dns.ListZonesOptions{Sort: []string{"name"}})
	if err != nil || len(l.Zones) != 2 {
		t.Fatalf("ListZones = %+v, %v", l, err)
	}
	z := l.Zones[1]
	if z.Name != "hand.test" || z.ID != 2 || z.TTL != 300 || z.AuthoritativeNameservers.Assigned[0] != "ns.hand.test." {
		t.Errorf("adopted zone = %+v", z)
	}
	if _, err := p.ImportZonefile(bg, "2", text); err != nil {
		t.Errorf("re-import with the file's own NS: %v", err)
	}
}

func itoaTest(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return fmtInt(n/10) + string(rune('0'+n%10))
}
