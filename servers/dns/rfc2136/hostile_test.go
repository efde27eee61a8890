package rfc2136_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/internal/fake/authdns"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/rfc2136"
	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// code is the provider error's code, "" for other errors.
func code(err error) string {
	var pe *dns.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func mustRR(t *testing.T, s string) mdns.RR {
	t.Helper()
	rr, err := mdns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// TestReadsFollowTheSerial: a zone is transferred whole once; while the
// serial stands no transfer is made; a change is read by IXFR.
func TestReadsFollowTheSerial(t *testing.T) {
	s := startFake(t, authdns.Modes{})
	p := newProvider(t, s.Addr(), testKey(t), nil)
	if _, err := p.GetZone(ctx(), zone); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := p.GetRRSet(ctx(), zone, "www", "A"); err != nil {
			t.Fatal(err)
		}
	}
	if _, axfrs, ixfrs := s.Counts(); axfrs != 1 || ixfrs != 0 {
		t.Fatalf("after four reads: %d AXFR, %d IXFR; want 1, 0", axfrs, ixfrs)
	}
	if err := s.Change(zone, []mdns.RR{mustRR(t, "www.example.com. 300 IN A 198.51.100.1")},
		[]mdns.RR{mustRR(t, "fresh.example.com. 300 IN AAAA 2001:db8::1")}); err != nil {
		t.Fatal(err)
	}
	rs, err := p.GetRRSet(ctx(), zone, "fresh", "AAAA")
	if err != nil || len(rs.Records) != 1 {
		t.Fatalf("after the change: %+v %v", rs, err)
	}
	www, _ := p.GetRRSet(ctx(), zone, "www", "A")
	if len(www.Records) != 1 || www.Records[0].Value != "198.51.100.2" {
		t.Fatalf("www after the change: %+v", www)
	}
	if _, axfrs, ixfrs := s.Counts(); axfrs != 1 || ixfrs != 1 {
		t.Fatalf("after the change: %d AXFR, %d IXFR; want 1, 1", axfrs, ixfrs)
	}
	// A journal that does not reach the kept serial: the IXFR answer is
	// the whole zone, which is read as such.
	if err := s.AddZone(strings.Replace(zoneText, " 1 3600 600", " 50 3600 600", 1)); err != nil {
		t.Fatal(err)
	}
	z, err := p.GetZone(ctx(), zone)
	if err != nil || z.RecordCount != 9 {
		t.Fatalf("after a reload: %+v %v", z, err)
	}
}

// TestHugeTransferRefused: a server that answers the AXFR with a million
// records is cut off at the zone-file budget, with bounded memory; the
// same transfer stops when the caller's context ends.
func TestHugeTransferRefused(t *testing.T) {
	s := startFake(t, authdns.Modes{Huge: 1_000_000})
	p := newProvider(t, s.Addr(), testKey(t), nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := p.GetZone(ctx(), zone)
	runtime.ReadMemStats(&after)
	if code(err) != "zone_too_large" || !strings.Contains(err.Error(), "zone_too_large") {
		t.Fatalf("err %v, want zone_too_large", err)
	}
	// The reader stopped at the budget: the server could hand over little
	// more than the budget's records (what the connection buffers hold),
	// never the million; and the bytes allocated by both ends of the
	// transfer together stay bounded.
	if sent := s.HugeSent(); sent > 2*zonefile.MaxRecords {
		t.Fatalf("the server sent %d records before the reader stopped", sent)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 400<<20 {
		t.Fatalf("the refused transfer allocated %d MiB", alloc>>20)
	}
	t.Logf("refused after %v, %d MiB allocated (budget %d records)", time.Since(start).Round(time.Millisecond),
		(after.TotalAlloc-before.TotalAlloc)>>20, zonefile.MaxRecords)

	small := newProvider(t, s.Addr(), testKey(t), func(o *rfc2136.Options) { o.MaxRecords = 1000 })
	if _, err := small.GetZone(ctx(), zone); code(err) != "zone_too_large" {
		t.Fatalf("a smaller budget: %v", err)
	}
	bytes := newProvider(t, s.Addr(), testKey(t), func(o *rfc2136.Options) { o.MaxBytes = 64 << 10 })
	if _, err := bytes.GetZone(ctx(), zone); code(err) != "zone_too_large" {
		t.Fatalf("a byte budget: %v", err)
	}

	c, cancel := context.WithCancel(ctx())
	time.AfterFunc(20*time.Millisecond, cancel)
	start = time.Now()
	_, err = p.GetZone(c, zone)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the transfer went on %v after its context ended", d)
	}
}

// TestTruncatedTransfer: a transfer that ends before its closing SOA is an
// error, and nothing of it is kept: once the server is whole again, the
// change is read complete.
func TestTruncatedTransfer(t *testing.T) {
	s := authdns.Start(t, authdns.Options{Keys: map[string]string{keyName: secret}, PerMessage: 2})
	if err := s.AddZone(zoneText); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, s.Addr(), testKey(t), nil)
	if _, err := p.GetZone(ctx(), zone); err != nil {
		t.Fatal(err)
	}
	add := []mdns.RR{mustRR(t, "a.example.com. 300 IN A 198.51.100.7"), mustRR(t, "b.example.com. 300 IN A 198.51.100.8"),
		mustRR(t, "c.example.com. 300 IN A 198.51.100.9")}
	if err := s.Change(zone, nil, add); err != nil {
		t.Fatal(err)
	}
	s.SetModes(authdns.Modes{TruncateAfter: 1})
	_, err := p.GetRRSet(ctx(), zone, "a", "A")
	if code(err) != "transfer_failed" || !strings.Contains(err.Error(), "transfer_failed") {
		t.Fatalf("truncated: %v", err)
	}
	var pe *dns.Error
	if errors.As(err, &pe) && !strings.Contains(pe.Message, "before its closing SOA") {
		t.Fatalf("message: %s", pe.Message)
	}
	s.SetModes(authdns.Modes{})
	for _, n := range []string{"a", "b", "c"} {
		if _, err := p.GetRRSet(ctx(), zone, n, "A"); err != nil {
			t.Fatalf("%s after the server recovered: %v", n, err)
		}
	}
}

// TestForgedSignatures: answers signed with another secret, or not at
// all, are dropped: reads fail, and an update whose answer is forged is
// reported as such, never as done.
func TestForgedSignatures(t *testing.T) {
	for _, m := range []authdns.Modes{{ForgeTSIG: true}, {Unsigned: true}} {
		s := startFake(t, m)
		p := newProvider(t, s.Addr(), testKey(t), nil)
		if _, err := p.GetZone(ctx(), zone); code(err) != "bad_signature" {
			t.Fatalf("%+v: read: %v", m, err)
		}
	}
	s := startFake(t, authdns.Modes{})
	p := newProvider(t, s.Addr(), testKey(t), nil)
	rfc2136.SetAfterRead(p, func() { s.SetModes(authdns.Modes{ForgeTSIG: true}) })
	_, err := p.AddRecords(ctx(), zone, "x", "A", []dns.Record{{Value: "198.51.100.3"}}, nil)
	if code(err) != "bad_signature" {
		t.Fatalf("forged update answer: %v", err)
	}
}

// TestWrongKey: a key the server does not share is reported as
// tsig_rejected; no error shows the secret.
func TestWrongKey(t *testing.T) {
	s := startFake(t, authdns.Modes{})
	wrong, err := tsig.NewKey(keyName, tsig.HMACSHA256, "b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldC0wMTIzNDU2Nzg=")
	if err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, s.Addr(), wrong, nil)
	_, err = p.GetZone(ctx(), zone)
	if code(err) != "tsig_rejected" {
		t.Fatalf("wrong secret: %v", err)
	}
	unknown, _ := tsig.NewKey("nobody.", tsig.HMACSHA256, secret)
	if _, err := newProvider(t, s.Addr(), unknown, nil).GetZone(ctx(), zone); code(err) != "tsig_rejected" || strings.Contains(err.Error(), secret) {
		t.Fatalf("unknown key: %v", err)
	}
}

// TestConflictNothingOverwritten: the zone changes between the read and
// the update; the update's prerequisite fails, and the other change stands.
func TestConflictNothingOverwritten(t *testing.T) {
	s := startFake(t, authdns.Modes{})
	p := newProvider(t, s.Addr(), testKey(t), nil)
	s.BeforeUpdate = func() {
		s.BeforeUpdate = nil
		_ = s.Change(zone, nil, []mdns.RR{mustRR(t, "www.example.com. 300 IN A 203.0.113.5")})
	}
	_, err := p.SetRecords(ctx(), zone, "www", "A", []dns.Record{{Value: "198.51.100.77"}})
	if code(err) != "rrset_changed" {
		t.Fatalf("err %v, want rrset_changed", err)
	}
	got := s.Records("www.example.com.", mdns.TypeA)
	if len(got) != 3 {
		t.Fatalf("the server holds %v", got)
	}
	for _, rr := range got {
		if rr.(*mdns.A).A.String() == "198.51.100.77" {
			t.Fatal("the update overwrote the other change")
		}
	}
	// A creation that meets an RRSet created meanwhile fails the same way.
	s.BeforeUpdate = func() {
		s.BeforeUpdate = nil
		_ = s.Change(zone, nil, []mdns.RR{mustRR(t, "late.example.com. 300 IN A 203.0.113.6")})
	}
	if _, _, err := p.CreateRRSet(ctx(), zone, dns.CreateRRSetRequest{Name: "late", Type: "A", Records: []dns.Record{{Value: "198.51.100.1"}}}); code(err) != "rrset_changed" {
		t.Fatalf("create: %v", err)
	}
}

// TestNotServed: a configured zone the server does not serve, and a server
// that is not there.
func TestNotServed(t *testing.T) {
	s := startFake(t, authdns.Modes{})
	p := newProvider(t, s.Addr(), testKey(t), func(o *rfc2136.Options) { o.Zones = []string{"other.org"} })
	if _, err := p.GetZone(ctx(), "other.org"); code(err) != "not_authoritative" {
		t.Fatalf("not served: %v", err)
	}
	if _, err := p.GetZone(ctx(), "example.com"); code(err) != "not_found" {
		t.Fatalf("not configured: %v", err)
	}
	gone := newProvider(t, "127.0.0.1:1", testKey(t), nil)
	if _, err := gone.GetZone(ctx(), zone); !errors.Is(err, upstream.ErrTransport) {
		t.Fatalf("no server: %v", err)
	}
}

// TestOptions: New refuses what cannot work.
func TestOptions(t *testing.T) {
	k := testKey(t)
	cases := map[string]rfc2136.Options{
		"no key":      {Server: "127.0.0.1:53", Zones: []string{zone}},
		"no zones":    {Server: "127.0.0.1:53", Key: k},
		"bad server":  {Server: "127.0.0.1:x", Zones: []string{zone}, Key: k},
		"twice":       {Server: "127.0.0.1", Zones: []string{zone, "EXAMPLE.com."}, Key: k},
		"not a name":  {Server: "127.0.0.1", Zones: []string{"a..b"}, Key: k},
		"a number":    {Server: "127.0.0.1", Zones: []string{"4711"}, Key: k},
		"ttl too low": {Server: "127.0.0.1", Zones: []string{zone}, Key: k, DefaultTTL: 5},
	}
	for name, o := range cases {
		if _, err := rfc2136.New(o); !errors.Is(err, rfc2136.ErrOptions) {
			t.Errorf("%s: %v", name, err)
		}
	}
	p, err := rfc2136.New(rfc2136.Options{Server: "127.0.0.1", Zones: []string{"Example.COM."}, Key: k})
	if err != nil || p.Server() != "127.0.0.1:53" || p.ZoneNames()[0] != "example.com" {
		t.Fatalf("defaults: %v %v", p, err)
	}
}
