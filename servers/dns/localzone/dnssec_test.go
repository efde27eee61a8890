package localzone

import (
	"fmt"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// signedQuery asks the responder with the DO bit over TCP.
func signedQuery(t *testing.T, addr, name string, typ uint16) *mdns.Msg {
	t.Helper()
	m := new(mdns.Msg)
	m.SetQuestion(name, typ)
	m.SetEdns0(4096, true)
	in, _, err := (&mdns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// verified checks every RRSIG of the answer against the zone's DNSKEY and
// returns the earliest expiration.
func verified(t *testing.T, in *mdns.Msg, key *mdns.DNSKEY, now time.Time) time.Time {
	t.Helper()
	var exp time.Time
	for _, rr := range append(in.Answer, in.Ns...) {
		sig, ok := rr.(*mdns.RRSIG)
		if !ok {
			continue
		}
		var set []mdns.RR
		for _, o := range append(in.Answer, in.Ns...) {
			if o.Header().Rrtype == sig.TypeCovered && strings.EqualFold(o.Header().Name, sig.Hdr.Name) {
				set = append(set, o)
			}
		}
		if err := sig.Verify(key, set); err != nil {
			t.Fatalf("RRSIG of %s/%s does not verify: %v", sig.Hdr.Name, mdns.TypeToString[sig.TypeCovered], err)
		}
		if !sig.ValidityPeriod(now) {
			t.Fatalf("RRSIG of %s/%s is not valid at %v", sig.Hdr.Name, mdns.TypeToString[sig.TypeCovered], now)
		}
		if e := sigTime(sig.Expiration); exp.IsZero() || e.Before(exp) {
			exp = e
		}
	}
	if exp.IsZero() {
		t.Fatalf("no RRSIG in %v", in)
	}
	return exp
}

// TestSignaturesRefreshed: signatures within a week of their expiration
// are made again (the zone's serial rises with them); an RRset that did
// not change keeps its signature across a change of another one.
func TestSignaturesRefreshed(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}
	p, err := New(t.TempDir(), &Options{Now: clk.now, DisableSync: true, DNSSEC: map[string]DNSSEC{"*": {}}})
	if err != nil {
		t.Fatal(err)
	}
	mustZone(t, p, "example.com")
	if _, err := p.AddRecords(bg, "example.com", "www", "A", recs("198.51.100.1"), nil); err != nil {
		t.Fatal(err)
	}
	r := startResponder(t, p, &ResponderOptions{Now: clk.now, DisableRateLimit: true})
	z, err := p.GetZone(bg, "example.com")
	if err != nil || z.DNSSEC == nil || z.DNSSEC.Algorithm != "ECDSAP256SHA256" || z.DNSSEC.Denial != DenialNSEC {
		t.Fatalf("get_zone: %+v %v", z.DNSSEC, err)
	}
	key := mustDNSKEY(t, z)
	www := signedQuery(t, r.Addr(), "www.example.com.", mdns.TypeA)
	first := verified(t, www, key, clk.now())
	if want := clk.now().Add(sigValidity); !first.Equal(want) {
		t.Fatalf("expires %v, want %v", first, want)
	}

	// Another RRset changes: www/A keeps its signature.
	if _, err := p.AddRecords(bg, "example.com", "api", "A", recs("198.51.100.2"), nil); err != nil {
		t.Fatal(err)
	}
	clk.set(clk.now().Add(time.Hour))
	again := signedQuery(t, r.Addr(), "www.example.com.", mdns.TypeA)
	if sigOf(www) != sigOf(again) {
		t.Fatal("an unchanged RRset was signed again")
	}

	// Eight days on, less than a week is left: the zone is signed again.
	serial := currentSerialOf(t, p)
	clk.set(clk.now().Add(8 * 24 * time.Hour))
	r.resignDue(bg)
	if currentSerialOf(t, p) == serial {
		t.Fatal("the serial did not rise with the new signatures")
	}
	later := verified(t, signedQuery(t, r.Addr(), "www.example.com.", mdns.TypeA), key, clk.now())
	if !later.After(clk.now().Add(sigRefresh)) {
		t.Fatalf("after refreshing, the earliest expiration is %v", later)
	}
}

func sigOf(m *mdns.Msg) string {
	for _, rr := range m.Answer {
		if s, ok := rr.(*mdns.RRSIG); ok {
			return s.Signature
		}
	}
	return ""
}

func currentSerialOf(t *testing.T, p *Provider) uint32 {
	t.Helper()
	e, err := p.entry(bg, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	return currentSerial(e.data)
}

func mustDNSKEY(t *testing.T, z dns.Zone) *mdns.DNSKEY {
	t.Helper()
	rr, err := mdns.NewRR(z.Name + ". 3600 IN DNSKEY " + z.DNSSEC.DNSKEY)
	if err != nil {
		t.Fatal(err)
	}
	return rr.(*mdns.DNSKEY)
}

// TestSignedZoneServed: the signed parts reach a query with DO and a zone
// transfer, never a query without DO; the key never prints.
func TestSignedZoneServed(t *testing.T) {
	p, err := New(t.TempDir(), &Options{DisableSync: true, DNSSEC: map[string]DNSSEC{"example.com": {Algorithm: AlgEd25519, Denial: DenialNSEC3}}})
	if err != nil {
		t.Fatal(err)
	}
	mustZone(t, p, "example.com")
	mustZone(t, p, "plain.org")
	r := startResponder(t, p, &ResponderOptions{DisableRateLimit: true})
	no := query(t, r.Addr(), "tcp", "nothere.example.com.", mdns.TypeA, 0)
	for _, rr := range no.Ns {
		if t2 := rr.Header().Rrtype; t2 == mdns.TypeRRSIG || t2 == mdns.TypeNSEC3 {
			t.Fatal("DNSSEC data in an answer to a query without DO")
		}
	}
	nx := signedQuery(t, r.Addr(), "nothere.example.com.", mdns.TypeA)
	n3 := 0
	for _, rr := range nx.Ns {
		if rr.Header().Rrtype == mdns.TypeNSEC3 {
			n3++
		}
	}
	if nx.Rcode != mdns.RcodeNameError || n3 < 1 {
		t.Fatalf("NXDOMAIN with DO: %v", nx)
	}
	if plain := signedQuery(t, r.Addr(), "plain.org.", mdns.TypeSOA); len(plain.Answer) != 1 {
		t.Fatalf("an unsigned zone answers %v", plain)
	}
	z, _ := p.GetZone(bg, "plain.org")
	if z.DNSSEC != nil {
		t.Fatalf("an unsigned zone shows %+v", z.DNSSEC)
	}
	k, _ := p.signers.key("example.com", false)
	if s := fmt.Sprintf("%v %+v %#v %s", k, k, k, k); strings.Contains(s, "PrivateKey") || strings.Count(s, "DNSSEC key") != 4 {
		t.Fatalf("a key prints as %q", s)
	}
}

// TestConcurrentEDNSAnswers: answers with an OPT record packed at once do
// not share it (packing writes the extended rcode into it); the race
// detector catches a shared one.
func TestConcurrentEDNSAnswers(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "example.com")
	r := startResponder(t, p, &ResponderOptions{DisableRateLimit: true})
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 20 {
				m := new(mdns.Msg)
				m.SetQuestion("example.com.", mdns.TypeSOA)
				m.SetEdns0(1232, true)
				_, _, _ = (&mdns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, r.Addr())
			}
		}()
	}
	for range 8 {
		<-done
	}
}
