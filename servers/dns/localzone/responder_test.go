package localzone

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	mdns "github.com/miekg/dns"
)

// startResponder serves p on a free loopback port until the test ends.
func startResponder(t testing.TB, p *Provider, o *ResponderOptions) *Responder {
	t.Helper()
	r := NewResponder(p, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.ListenAndServe(ctx, "127.0.0.1:0") }()
	select {
	case <-r.Ready():
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("responder did not start")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenAndServe returned %v", err)
		}
	})
	return r
}

func query(t testing.TB, addr, netw, name string, qtype uint16, edns uint16) *mdns.Msg {
	t.Helper()
	m := new(mdns.Msg)
	m.SetQuestion(name, qtype)
	if edns > 0 {
		m.SetEdns0(edns, false)
	}
	c := &mdns.Client{Net: netw, Timeout: 2 * time.Second, UDPSize: 65535}
	in, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("query %s %s over %s: %v", name, mdns.TypeToString[qtype], netw, err)
	}
	return in
}

// testZone builds example.test with the shapes every responder test needs.
func testZone(t testing.TB) *Provider {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "example.test")
	if _, err := p.ChangeZoneTTL(bg, "example.test", 7200); err != nil {
		t.Fatal(err)
	}
	ttl := 300
	add := func(name, typ string, ttl *int, vals ...string) {
		t.Helper()
		if _, err := p.AddRecords(bg, "example.test", name, typ, recs(vals...), ttl); err != nil {
			t.Fatalf("%s/%s: %v", name, typ, err)
		}
	}
	add("www", "A", &ttl, "192.0.2.1")
	add("alias", "CNAME", nil, "www")
	add("chain", "CNAME", nil, "alias")
	add("dangling", "CNAME", nil, "missing")
	add("ext", "CNAME", nil, "target.example.net.")
	add("*.wild", "A", nil, "192.0.2.9")
	add("*.wild", "TXT", nil, `"wild"`)
	add("sub.wild", "TXT", nil, `"real"`)
	add("a.b.c", "A", nil, "192.0.2.3")
	add("deleg", "NS", nil, "ns1.deleg", "ns.example.net.")
	add("ns1.deleg", "A", nil, "192.0.2.53")
	var big []string
	for i := range 60 {
		big = append(big, fmt.Sprintf(`"record number %02d with some padding to make the answer large"`, i))
	}
	add("big", "TXT", nil, big...)
	return p
}

func TestResponderAnswers(t *testing.T) {
	p := testZone(t)
	addr := startResponder(t, p, nil).Addr()
	type want struct {
		rcode  int
		aa     bool
		answer []string // "owner type" of each answer RR
		ns     string   // type of the authority RRs, "" for none
		extra  int      // additional RRs besides OPT
	}
	cases := []struct {
		name  string
		qtype uint16
		want  want
	}{
		{"www.example.test.", mdns.TypeA, want{0, true, []string{"www.example.test. A"}, "", 0}},
		{"WWW.Example.TEST.", mdns.TypeA, want{0, true, []string{"www.example.test. A"}, "", 0}},
		{"www.example.test.", mdns.TypeAAAA, want{0, true, nil, "SOA", 0}},
		{"nope.example.test.", mdns.TypeA, want{mdns.RcodeNameError, true, nil, "SOA", 0}},
		{"chain.example.test.", mdns.TypeA, want{0, true, []string{"chain.example.test. CNAME", "alias.example.test. CNAME", "www.example.test. A"}, "", 0}},
		{"alias.example.test.", mdns.TypeCNAME, want{0, true, []string{"alias.example.test. CNAME"}, "", 0}},
		{"dangling.example.test.", mdns.TypeA, want{mdns.RcodeNameError, true, []string{"dangling.example.test. CNAME"}, "SOA", 0}},
		{"ext.example.test.", mdns.TypeA, want{0, true, []string{"ext.example.test. CNAME"}, "", 0}},
		{"x.wild.example.test.", mdns.TypeA, want{0, true, []string{"x.wild.example.test. A"}, "", 0}},
		{"y.x.wild.example.test.", mdns.TypeTXT, want{0, true, []string{"y.x.wild.example.test. TXT"}, "", 0}},
		{"x.wild.example.test.", mdns.TypeMX, want{0, true, nil, "SOA", 0}},
		{"sub.wild.example.test.", mdns.TypeA, want{0, true, nil, "SOA", 0}},
		{"x.sub.wild.example.test.", mdns.TypeA, want{mdns.RcodeNameError, true, nil, "SOA", 0}},
		{"wild.example.test.", mdns.TypeA, want{0, true, nil, "SOA", 0}},
		{"b.c.example.test.", mdns.TypeA, want{0, true, nil, "SOA", 0}},
		{"c.example.test.", mdns.TypeTXT, want{0, true, nil, "SOA", 0}},
		{"deleg.example.test.", mdns.TypeA, want{0, false, nil, "NS", 1}},
		{"host.deleg.example.test.", mdns.TypeAAAA, want{0, false, nil, "NS", 1}},
		{"deleg.example.test.", mdns.TypeDS, want{0, true, nil, "SOA", 0}},
		{"example.test.", mdns.TypeNS, want{0, true, []string{"example.test. NS"}, "", 0}},
		{"example.test.", mdns.TypeSOA, want{0, true, []string{"example.test. SOA"}, "", 0}},
		{"www.example.test.", mdns.TypeANY, want{0, true, []string{"www.example.test. A"}, "", 0}},
		{"example.test.", mdns.TypeANY, want{0, true, []string{"example.test. NS"}, "", 0}},
		{"example.net.", mdns.TypeA, want{mdns.RcodeRefused, false, nil, "", 0}},
		{"test.", mdns.TypeSOA, want{mdns.RcodeRefused, false, nil, "", 0}},
		{"example.test.", mdns.TypeAXFR, want{mdns.RcodeRefused, false, nil, "", 0}},
	}
	for _, c := range cases {
		t.Run(c.name+"/"+mdns.TypeToString[c.qtype], func(t *testing.T) {
			for _, netw := range []string{"udp", "tcp"} {
				in := query(t, addr, netw, c.name, c.qtype, 0)
				var got []string
				for _, rr := range in.Answer {
					got = append(got, strings.ToLower(rr.Header().Name)+" "+mdns.TypeToString[rr.Header().Rrtype])
				}
				ns := ""
				if len(in.Ns) > 0 {
					ns = mdns.TypeToString[in.Ns[0].Header().Rrtype]
				}
				if in.Rcode != c.want.rcode || in.Authoritative != c.want.aa || strings.Join(got, ",") != strings.Join(c.want.answer, ",") ||
					ns != c.want.ns || len(in.Extra) != c.want.extra || in.Question[0].Name != c.name {
					t.Errorf("%s: got\n%v", netw, in)
				}
			}
		})
	}
}

func TestResponderNegativeTTL(t *testing.T) {
	p := testZone(t)
	addr := startResponder(t, p, nil).Addr()
	in := query(t, addr, "udp", "nope.example.test.", mdns.TypeA, 0)
	soa := in.Ns[0].(*mdns.SOA)
	if soa.Hdr.Ttl != 3600 || soa.Minttl != 3600 {
		t.Errorf("negative SOA ttl %d (zone 7200, minimum 3600)", soa.Hdr.Ttl)
	}
	in = query(t, addr, "udp", "example.test.", mdns.TypeSOA, 0)
	if in.Answer[0].Header().Ttl != 7200 {
		t.Errorf("SOA answer ttl = %d, want the zone's 7200", in.Answer[0].Header().Ttl)
	}
	if in = query(t, addr, "udp", "www.example.test.", mdns.TypeA, 0); in.Answer[0].Header().Ttl != 300 {
		t.Errorf("www ttl = %d", in.Answer[0].Header().Ttl)
	}
}

func TestResponderEDNSAndTruncation(t *testing.T) {
	p := testZone(t)
	addr := startResponder(t, p, nil).Addr()

	in := query(t, addr, "udp", "www.example.test.", mdns.TypeA, 4096)
	opt := in.IsEdns0()
	if opt == nil || opt.UDPSize() != DefaultUDPSize || in.Truncated {
		t.Errorf("EDNS answer: %v", in)
	}
	if in := query(t, addr, "udp", "www.example.test.", mdns.TypeA, 0); in.IsEdns0() != nil {
		t.Error("OPT in the answer to a query without one")
	}
	// 60 TXT records (~4 KB): too big for 512 and for 1232.
	for _, size := range []uint16{0, 4096} {
		in := query(t, addr, "udp", "big.example.test.", mdns.TypeTXT, size)
		if !in.Truncated || len(in.Answer) >= 60 {
			t.Errorf("udp (edns %d): TC=%v, %d answers", size, in.Truncated, len(in.Answer))
		}
		in.Compress = true // as it was sent
		if size > 0 && (in.IsEdns0() == nil || in.Len() > DefaultUDPSize) {
			t.Errorf("udp (edns %d): %d bytes, opt %v", size, in.Len(), in.IsEdns0())
		}
	}
	if in := query(t, addr, "tcp", "big.example.test.", mdns.TypeTXT, 0); in.Truncated || len(in.Answer) != 60 {
		t.Errorf("tcp: TC=%v, %d answers", in.Truncated, len(in.Answer))
	}
	// A client size of 8192 is capped at the server's own.
	r2 := startResponder(t, p, &ResponderOptions{UDPSize: 8192})
	if in := query(t, r2.Addr(), "udp", "big.example.test.", mdns.TypeTXT, 8192); in.Truncated || len(in.Answer) != 60 {
		t.Errorf("udp 8192: TC=%v, %d answers", in.Truncated, len(in.Answer))
	}

	// EDNS version 1: BADVERS.
	m := new(mdns.Msg)
	m.SetQuestion("www.example.test.", mdns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().SetVersion(1)
	in, _, err := (&mdns.Client{Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil || in.Rcode != mdns.RcodeBadVers {
		t.Errorf("BADVERS: %v, %v", in, err)
	}
	// Class CH: REFUSED.
	m = new(mdns.Msg)
	m.SetQuestion("version.bind.", mdns.TypeTXT)
	m.Question[0].Qclass = mdns.ClassCHAOS
	if in, _, err := (&mdns.Client{Timeout: 2 * time.Second}).Exchange(m, addr); err != nil || in.Rcode != mdns.RcodeRefused {
		t.Errorf("CH: %v, %v", in, err)
	}
	// Opcode NOTIFY: not implemented.
	m = new(mdns.Msg)
	m.SetNotify("example.test.")
	if in, _, err := (&mdns.Client{Timeout: 2 * time.Second}).Exchange(m, addr); err != nil || in.Rcode != mdns.RcodeNotImplemented {
		t.Errorf("NOTIFY: %v, %v", in, err)
	}
}

func TestResponderSeesChanges(t *testing.T) {
	p := testZone(t)
	addr := startResponder(t, p, &ResponderOptions{RecheckInterval: 10 * time.Millisecond}).Addr()
	// Through the Provider: the very next answer.
	if _, err := p.SetRecords(bg, "example.test", "www", "A", recs("198.51.100.4")); err != nil {
		t.Fatal(err)
	}
	in := query(t, addr, "udp", "www.example.test.", mdns.TypeA, 0)
	if len(in.Answer) != 1 || in.Answer[0].(*mdns.A).A.String() != "198.51.100.4" {
		t.Fatalf("after set_records: %v", in)
	}
	mustZone(t, p, "new.test")
	if in := query(t, addr, "udp", "new.test.", mdns.TypeSOA, 0); in.Rcode != 0 || len(in.Answer) != 1 {
		t.Fatalf("new zone: %v", in)
	}
	if _, err := p.DeleteZone(bg, "new.test"); err != nil {
		t.Fatal(err)
	}
	if in := query(t, addr, "udp", "new.test.", mdns.TypeSOA, 0); in.Rcode != mdns.RcodeRefused {
		t.Fatalf("deleted zone: %v", in)
	}
	// By hand: after the recheck interval.
	path := filepath.Join(p.Dir(), "example.test.zone")
	text, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(text, "hand 60 IN A 192.0.2.99\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return len(query(t, addr, "udp", "hand.example.test.", mdns.TypeA, 0).Answer) == 1
	})
	// A broken edit keeps the last good version in service.
	if err := os.WriteFile(path, append(text, "broken IN A 1.2.3\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if in := query(t, addr, "udp", "hand.example.test.", mdns.TypeA, 0); len(in.Answer) != 1 {
		t.Errorf("broken edit: %v", in)
	}
	// A zone whose file never parsed: SERVFAIL.
	if err := os.WriteFile(filepath.Join(p.Dir(), "bad.test.zone"), []byte("@ IN A 1.2.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return query(t, addr, "udp", "bad.test.", mdns.TypeA, 0).Rcode == mdns.RcodeServerFailure
	})
	// Secondary zones are not served.
	if _, _, err := p.CreateZone(bg, dns.CreateZoneRequest{Name: "sec.test", Mode: dns.ModeSecondary, PrimaryNameservers: []dns.PrimaryNameserver{{Address: "192.0.2.1"}}}); err != nil {
		t.Fatal(err)
	}
	if in := query(t, addr, "udp", "sec.test.", mdns.TypeSOA, 0); in.Rcode != mdns.RcodeRefused {
		t.Errorf("secondary: %v", in)
	}
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestResponderDefaultsAndErrors(t *testing.T) {
	p, _ := newTestProvider(t, "")
	r := NewResponder(p, nil)
	if r.Addr() != "" || r.udpSize != DefaultUDPSize || r.recheck != DefaultRecheckInterval {
		t.Errorf("defaults: %q %d %v", r.Addr(), r.udpSize, r.recheck)
	}
	if err := r.ListenAndServe(bg, "not an address"); err == nil {
		t.Error("bad address accepted")
	}
}
