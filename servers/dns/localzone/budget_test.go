package localzone

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// hostileText is the issue 10.1 file: under 1 KB, a few dozen $GENERATE
// lines of one identical record each, millions of records once expanded,
// one record after de-duplication.
func hostileText(zone string) string {
	var b strings.Builder
	b.WriteString("$ORIGIN " + zone + ".\n@ IN SOA localhost. h.example. 1 2 3 4 5\n@ IN NS localhost.\n")
	for range 24 {
		b.WriteString("$GENERATE 0-65535 @ TXT x\n")
	}
	return b.String()
}

// heavyText is within the budget but slow to parse: 65,536 distinct
// records from one line.
func heavyText(zone string) string {
	return "$ORIGIN " + zone + ".\n$TTL 3600\n@ IN SOA localhost. h.example. 1 2 3 4 5\n@ IN NS localhost.\n" +
		"$GENERATE 0-65535 h$ A 192.0.2.1\n"
}

// TestHostileGenerateRefusedByBudget: the file is refused before a single
// record is parsed (the $GENERATE ranges are charged before expansion),
// through import, creation and a file found on disk.
func TestHostileGenerateRefusedByBudget(t *testing.T) {
	text := hostileText("a.test")
	if len(text) >= 1024 {
		t.Fatalf("hostile file is %d bytes, want < 1 KB", len(text))
	}
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	before := zonefile.Parsed()
	_, err := p.ImportZonefile(bg, "a.test", text)
	wantCode(t, err, 422, "invalid_input")
	if !strings.Contains(err.(*dns.Error).Message, "more than 200000 records") {
		t.Errorf("message = %q", err.(*dns.Error).Message)
	}
	if err := p.CheckImport(bg, dns.Zone{ID: 1}, text); err == nil {
		t.Error("CheckImport accepted the hostile file")
	}
	_, _, err = p.CreateZone(bg, dns.CreateZoneRequest{Name: "b.test", Mode: dns.ModePrimary, Zonefile: hostileText("b.test")})
	wantCode(t, err, 422, "invalid_input")
	if err := os.WriteFile(filepath.Join(p.Dir(), "c.test.zone"), []byte(hostileText("c.test")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = p.GetZone(bg, "c.test")
	wantCode(t, err, 422, CodeInvalidZonefile)
	if n := zonefile.Parsed() - before; n > 16 {
		t.Errorf("%d records parsed for hostile files; the budget must refuse them before parsing", n)
	}
}

// TestRecordsChargedBeforeDedup: identical records count, one by one.
func TestRecordsChargedBeforeDedup(t *testing.T) {
	text := "$ORIGIN a.test.\n@ 300 IN SOA localhost. h.example. 1 2 3 4 5\n" + strings.Repeat("@ 300 IN TXT x\n", 20)
	err := zonefile.Records(bg, text, "a.test.", zonefile.Options{Max: 10}, func(_ mdns.RR, _ string) error { return nil })
	if !errors.Is(err, zonefile.ErrBudget) {
		t.Fatalf("err = %v, want the budget", err)
	}
}

// TestExplicitTTLZeroRefused: TTL 0 stated in a zone file is refused like
// any TTL under 60, not read as "inherit the default" (issue 10.12).
func TestExplicitTTLZeroRefused(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	base := "$ORIGIN a.test.\n$TTL 600\n@ IN SOA localhost. h.example. 1 2 3 4 5\n@ IN NS localhost.\n"
	_, err := p.ImportZonefile(bg, "a.test", base+"www 0 IN A 192.0.2.1\n")
	wantCode(t, err, 422, "invalid_input")
	_, err = p.ImportZonefile(bg, "a.test", strings.Replace(base, "$TTL 600\n", "", 1)+"www 0 IN A 192.0.2.1\n")
	wantCode(t, err, 422, "invalid_input")
	// Inherited TTLs still inherit.
	if _, err := p.ImportZonefile(bg, "a.test", base+"www IN A 192.0.2.1\n"); err != nil {
		t.Fatal(err)
	}
	if rs, _ := p.GetRRSet(bg, "a.test", "www", "A"); rs.TTL != nil {
		t.Errorf("www/A TTL = %v, want the default", *rs.TTL)
	}
}

// TestImportParsesWithoutStoreLock: while an import parses a large file,
// another call on the store answers (it returns before the parse ends, and
// its latency is logged).
func TestImportParsesWithoutStoreLock(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	mustZone(t, p, "other.test")
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	start := zonefile.Parsed()
	done := make(chan error, 1)
	go func() { _, err := p.ImportZonefile(ctx, "a.test", heavyText("a.test")); done <- err }()
	waitParsing(t, start, done)
	t0 := time.Now()
	if _, err := p.GetZone(bg, "other.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ListZones(bg, dns.ListZonesOptions{}); err != nil {
		t.Fatal(err)
	}
	latency := time.Since(t0)
	select {
	case err := <-done:
		t.Fatalf("the import ended (%v) before the other calls could show they were not blocked", err)
	default:
	}
	t.Logf("get_zone + list_zones during the parse: %v (parsed %d records so far)", latency, zonefile.Parsed()-start)
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// TestImportStopsOnCancel: the parse ends with the caller's context.
func TestImportStopsOnCancel(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	ctx, cancel := context.WithCancel(bg)
	start := zonefile.Parsed()
	done := make(chan error, 1)
	go func() { _, err := p.ImportZonefile(ctx, "a.test", heavyText("a.test")); done <- err }()
	waitParsing(t, start, done)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	stopped := zonefile.Parsed()
	time.Sleep(20 * time.Millisecond)
	if n := zonefile.Parsed() - start; n >= 65536 || zonefile.Parsed() != stopped {
		t.Errorf("parsed %d records: the parse went on after the caller left", n)
	}
	if z, _ := p.GetZone(bg, "a.test"); z.RecordCount != 2 {
		t.Errorf("zone holds %d records after a cancelled import", z.RecordCount)
	}
}

// waitParsing waits until a parse has read some records.
func waitParsing(t *testing.T, start int64, done chan error) {
	t.Helper()
	for zonefile.Parsed()-start < 1000 {
		select {
		case err := <-done:
			t.Fatalf("import ended before parsing was seen: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
}
