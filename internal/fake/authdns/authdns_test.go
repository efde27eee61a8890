package authdns_test

import (
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/internal/fake/authdns"
)

const (
	keyName = "k."
	secret  = "aDuN3MJK7Ptz0Q0lQbbBv2Dq0vQ2E+JtG0M8q3Xk1sE="
	zone    = `example.com. 3600 IN SOA ns.example.com. host.example.com. 10 3600 600 86400 300
example.com. 3600 IN NS ns.example.com.
www.example.com. 300 IN A 192.0.2.1
www.example.com. 300 IN A 192.0.2.2
alias.example.com. 300 IN CNAME www.example.com.
`
)

func start(t *testing.T, opts authdns.Options) *authdns.Server {
	t.Helper()
	if opts.Keys == nil {
		opts.Keys = map[string]string{keyName: secret}
	}
	s := authdns.Start(t, opts)
	if err := s.AddZone(zone); err != nil {
		t.Fatal(err)
	}
	return s
}

// exchange sends m over TCP, signed with the key unless unsigned.
func exchange(t *testing.T, s *authdns.Server, m *mdns.Msg, signed bool) *mdns.Msg {
	t.Helper()
	c := &mdns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: map[string]string{keyName: secret}}
	if signed {
		m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
	}
	in, _, err := c.Exchange(m, s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if signed && in.IsTsig() == nil {
		t.Fatal("answer to a signed request is unsigned")
	}
	return in
}

func rr(t *testing.T, s string) mdns.RR {
	t.Helper()
	r, err := mdns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func upd() *mdns.Msg {
	m := new(mdns.Msg)
	m.SetUpdate("example.com.")
	return m
}

// TestPrerequisites: each form of RFC 2136 §2.4 gives its rcode, and a
// failed one changes nothing.
func TestPrerequisites(t *testing.T) {
	s := start(t, authdns.Options{})
	www := []mdns.RR{rr(t, "www.example.com. 0 IN A 192.0.2.1"), rr(t, "www.example.com. 0 IN A 192.0.2.2")}
	cases := []struct {
		name string
		pre  func(m *mdns.Msg)
		want int
	}{
		{"rrset exists", func(m *mdns.Msg) { m.RRsetUsed([]mdns.RR{rr(t, "www.example.com. 0 IN A 0.0.0.0")}) }, mdns.RcodeSuccess},
		{"rrset missing", func(m *mdns.Msg) { m.RRsetUsed([]mdns.RR{rr(t, "nope.example.com. 0 IN A 0.0.0.0")}) }, mdns.RcodeNXRrset},
		{"rrset not used", func(m *mdns.Msg) { m.RRsetNotUsed([]mdns.RR{rr(t, "www.example.com. 0 IN A 0.0.0.0")}) }, mdns.RcodeYXRrset},
		{"name used", func(m *mdns.Msg) { m.NameUsed([]mdns.RR{rr(t, "nope.example.com. 0 IN A 0.0.0.0")}) }, mdns.RcodeNameError},
		{"name not used", func(m *mdns.Msg) { m.NameNotUsed([]mdns.RR{rr(t, "www.example.com. 0 IN A 0.0.0.0")}) }, mdns.RcodeYXDomain},
		{"value exact", func(m *mdns.Msg) { m.Used(www) }, mdns.RcodeSuccess},
		{"value subset", func(m *mdns.Msg) { m.Used(www[:1]) }, mdns.RcodeNXRrset},
		{"value other", func(m *mdns.Msg) { m.Used([]mdns.RR{rr(t, "www.example.com. 0 IN A 192.0.2.9")}) }, mdns.RcodeNXRrset},
		{"ttl not zero", func(m *mdns.Msg) { m.Answer = []mdns.RR{rr(t, "www.example.com. 5 IN A 192.0.2.1")} }, mdns.RcodeFormatError},
		{"not zone", func(m *mdns.Msg) { m.RRsetUsed([]mdns.RR{rr(t, "www.example.org. 0 IN A 0.0.0.0")}) }, mdns.RcodeNotZone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := s.Serial("example.com.")
			m := upd()
			c.pre(m)
			m.Insert([]mdns.RR{rr(t, "added.example.com. 300 IN A 192.0.2.50")})
			in := exchange(t, s, m, true)
			if in.Rcode != c.want {
				t.Fatalf("rcode %s, want %s", mdns.RcodeToString[in.Rcode], mdns.RcodeToString[c.want])
			}
			added := len(s.Records("added.example.com.", mdns.TypeA)) == 1
			if c.want != mdns.RcodeSuccess && (added || s.Serial("example.com.") != before) {
				t.Fatal("a failed prerequisite changed the zone")
			}
			s.Change("example.com.", []mdns.RR{rr(t, "added.example.com. 300 IN A 192.0.2.50")}, nil)
		})
	}
}

// TestUpdateRules: §3.4.2's special cases and the TSIG policy.
func TestUpdateRules(t *testing.T) {
	s := start(t, authdns.Options{})
	// CNAME beside other data, and data beside a CNAME: ignored, NOERROR.
	m := upd()
	m.Insert([]mdns.RR{rr(t, "www.example.com. 300 IN CNAME other.example.com."), rr(t, "alias.example.com. 300 IN TXT \"x\"")})
	if in := exchange(t, s, m, true); in.Rcode != mdns.RcodeSuccess {
		t.Fatalf("rcode %d", in.Rcode)
	}
	if len(s.Records("www.example.com.", mdns.TypeCNAME)) != 0 || len(s.Records("alias.example.com.", mdns.TypeTXT)) != 0 {
		t.Fatal("a CNAME conflict was applied")
	}
	// The apex SOA and NS are never deleted; the last NS stays.
	m = upd()
	m.RemoveName([]mdns.RR{rr(t, "example.com. 0 IN A 0.0.0.0")})
	m.Remove([]mdns.RR{rr(t, "example.com. 0 IN NS ns.example.com.")})
	exchange(t, s, m, true)
	if len(s.Records("example.com.", mdns.TypeSOA)) != 1 || len(s.Records("example.com.", mdns.TypeNS)) != 1 {
		t.Fatal("the apex lost its SOA or NS")
	}
	// An added record's TTL becomes its RRset's.
	m = upd()
	m.Insert([]mdns.RR{rr(t, "www.example.com. 900 IN A 192.0.2.3")})
	exchange(t, s, m, true)
	for _, r := range s.Records("www.example.com.", mdns.TypeA) {
		if r.Header().Ttl != 900 {
			t.Fatalf("ttl %d", r.Header().Ttl)
		}
	}
	// Unsigned: REFUSED; a zone not served: NOTAUTH.
	m = upd()
	m.Insert([]mdns.RR{rr(t, "x.example.com. 300 IN A 192.0.2.3")})
	if in := exchange(t, s, m, false); in.Rcode != mdns.RcodeRefused {
		t.Fatalf("unsigned: rcode %d", in.Rcode)
	}
	// A zone it does not serve: NOTAUTH (signed, which miekg/dns's client
	// reports as ErrAuth whatever the signature).
	m = new(mdns.Msg)
	m.SetUpdate("example.org.")
	m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
	c0 := &mdns.Client{Net: "tcp", TsigSecret: map[string]string{keyName: secret}}
	if _, _, err := c0.Exchange(m, s.Addr()); err == nil || err.Error() != mdns.ErrAuth.Error() {
		t.Fatalf("other zone: %v", err)
	}
	// A wrong secret: NOTAUTH with BADSIG, unsigned (miekg/dns reports it as ErrAuth).
	c := &mdns.Client{Net: "tcp", TsigSecret: map[string]string{keyName: "b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA=="}}
	m = upd()
	m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
	in, _, err := c.Exchange(m, s.Addr())
	if err == nil || err.Error() != mdns.ErrAuth.Error() {
		t.Fatalf("wrong secret: %v %v", err, in)
	}
}

// TestTransfers: AXFR is the SOA, the records, the SOA; IXFR from a
// journalled serial is the differences; from the current serial the SOA
// alone; from an unknown serial the whole zone. Unsigned: REFUSED.
func TestTransfers(t *testing.T) {
	s := start(t, authdns.Options{PerMessage: 2})
	axfr := transfer(t, s, mdns.TypeAXFR, 0, true)
	if len(axfr) != 6 || axfr[0].Header().Rrtype != mdns.TypeSOA || axfr[5].Header().Rrtype != mdns.TypeSOA {
		t.Fatalf("axfr %v", axfr)
	}
	if err := s.Change("example.com.", []mdns.RR{rr(t, "www.example.com. 300 IN A 192.0.2.1")}, []mdns.RR{rr(t, "new.example.com. 300 IN A 192.0.2.7")}); err != nil {
		t.Fatal(err)
	}
	ixfr := transfer(t, s, mdns.TypeIXFR, 10, true)
	// SOA 11, SOA 10, del www A .1, SOA 11, add new A, SOA 11
	if len(ixfr) != 6 || ixfr[1].(*mdns.SOA).Serial != 10 || ixfr[3].(*mdns.SOA).Serial != 11 {
		t.Fatalf("ixfr %v", ixfr)
	}
	if cur := transfer(t, s, mdns.TypeIXFR, 11, true); len(cur) != 1 {
		t.Fatalf("current ixfr %v", cur)
	}
	if full := transfer(t, s, mdns.TypeIXFR, 3, true); len(full) != 6 {
		t.Fatalf("unknown-serial ixfr %v", full)
	}
	m := new(mdns.Msg)
	m.SetAxfr("example.com.")
	if in := exchange(t, s, m, false); in.Rcode != mdns.RcodeRefused {
		t.Fatalf("unsigned axfr: rcode %d", in.Rcode)
	}
}

// transfer runs an AXFR or IXFR and returns its records.
func transfer(t *testing.T, s *authdns.Server, typ uint16, serial uint32, signed bool) []mdns.RR {
	t.Helper()
	m := new(mdns.Msg)
	if typ == mdns.TypeAXFR {
		m.SetAxfr("example.com.")
	} else {
		m.SetIxfr("example.com.", serial, "ns.example.com.", "host.example.com.")
	}
	if signed {
		m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
	}
	tr := &mdns.Transfer{TsigSecret: map[string]string{keyName: secret}}
	ch, err := tr.In(m, s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	var out []mdns.RR
	for env := range ch {
		if env.Error != nil {
			t.Fatal(env.Error)
		}
		out = append(out, env.RR...)
	}
	return out
}

// TestHostileModes: the forged signature fails verification; a truncated
// transfer has no closing SOA; a huge one streams every record.
func TestHostileModes(t *testing.T) {
	forged := start(t, authdns.Options{Modes: authdns.Modes{ForgeTSIG: true}})
	m := new(mdns.Msg)
	m.SetQuestion("example.com.", mdns.TypeSOA)
	m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
	c := &mdns.Client{Net: "tcp", TsigSecret: map[string]string{keyName: secret}}
	if _, _, err := c.Exchange(m, forged.Addr()); err == nil {
		t.Fatal("a forged signature verified")
	}
	trunc := start(t, authdns.Options{PerMessage: 1, Modes: authdns.Modes{TruncateAfter: 2}})
	m = new(mdns.Msg)
	m.SetAxfr("example.com.")
	m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
	ch, err := (&mdns.Transfer{TsigSecret: map[string]string{keyName: secret}}).In(m, trunc.Addr())
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for env := range ch {
		last = env.Error
	}
	if last == nil {
		t.Fatal("a truncated transfer ended cleanly")
	}
	huge := start(t, authdns.Options{PerMessage: 500, Modes: authdns.Modes{Huge: 5000}})
	if got := transfer(t, huge, mdns.TypeAXFR, 0, true); len(got) != 5002 {
		t.Fatalf("huge: %d records", len(got))
	}
}
