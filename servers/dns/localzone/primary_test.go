package localzone

import (
	"bytes"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
)

const (
	xfrKey    = "xfr-key."
	xfrSecret = "aDuN3MJK7Ptz0Q0lQbbBv2Dq0vQ2E+JtG0M8q3Xk1sE="
	otherKey  = "other-key."
)

// primaryKeys are the keys a hidden primary knows: the secondary's and
// another one.
func primaryKeys(t testing.TB) *tsig.Keyring {
	t.Helper()
	ring, err := tsig.Parse("hmac-sha256:" + xfrKey + ":" + xfrSecret + "\nhmac-sha512:" + otherKey + ":" + strings.Repeat("b", 43) + "=\n")
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// notified is a fake secondary's NOTIFY listener: it records the zone and
// whether the NOTIFY was signed with its key.
type notified struct {
	mu   sync.Mutex
	seen []string
	addr netip.AddrPort
}

func listenNotify(t *testing.T) *notified {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &notified{addr: netip.MustParseAddrPort(pc.LocalAddr().String())}
	srv := &mdns.Server{PacketConn: pc, TsigSecret: map[string]string{xfrKey: xfrSecret},
		Handler: mdns.HandlerFunc(func(w mdns.ResponseWriter, req *mdns.Msg) {
			signed := req.IsTsig() != nil && w.TsigStatus() == nil
			n.mu.Lock()
			n.seen = append(n.seen, req.Question[0].Name+map[bool]string{true: " signed", false: " unsigned"}[signed])
			n.mu.Unlock()
			m := new(mdns.Msg)
			m.SetReply(req)
			if signed {
				m.SetTsig(xfrKey, mdns.HmacSHA256, 300, time.Now().Unix())
			}
			_ = w.WriteMsg(m)
		})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return n
}

func (n *notified) count(zone string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, s := range n.seen {
		if s == zone+". signed" {
			c++
		}
	}
	return c
}

// xfr runs a transfer as a secondary would.
func xfr(t *testing.T, addr string, m *mdns.Msg, secret map[string]string) ([]mdns.RR, error) {
	t.Helper()
	tr := &mdns.Transfer{TsigSecret: secret}
	ch, err := tr.In(m, addr)
	if err != nil {
		return nil, err
	}
	var out []mdns.RR
	for env := range ch {
		if env.Error != nil {
			return out, env.Error
		}
		out = append(out, env.RR...)
	}
	return out, nil
}

func signedXFR(typ uint16, serial uint32, key string) *mdns.Msg {
	m := new(mdns.Msg)
	if typ == mdns.TypeAXFR {
		m.SetAxfr("example.com.")
	} else {
		m.SetIxfr("example.com.", serial, "localhost.", "hostmaster.example.com.")
	}
	alg := mdns.HmacSHA256
	if key == otherKey {
		alg = mdns.HmacSHA512
	}
	if key != "" {
		m.SetTsig(key, alg, 300, time.Now().Unix())
	}
	return m
}

// TestHiddenPrimary: a listed secondary transfers the zone by AXFR and then
// IXFR, signed with its key; NOTIFY reaches it on every change; everyone
// else is refused, and the refusal is logged.
func TestHiddenPrimary(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "example.com")
	if _, err := p.AddRecords(bg, "example.com", "www", "A", recs("198.51.100.1"), nil); err != nil {
		t.Fatal(err)
	}
	sec := listenNotify(t)
	var logs syncBuf
	r := startResponder(t, p, &ResponderOptions{Keys: primaryKeys(t), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Secondaries: []Secondary{{Addr: sec.addr, Key: xfrKey}}, NotifyWait: 50 * time.Millisecond})
	secret := map[string]string{xfrKey: xfrSecret}

	full, err := xfr(t, r.Addr(), signedXFR(mdns.TypeAXFR, 0, xfrKey), secret)
	if err != nil || len(full) != 4 || full[0].Header().Rrtype != mdns.TypeSOA || full[3].Header().Rrtype != mdns.TypeSOA {
		t.Fatalf("axfr: %v %v", full, err)
	}
	serial := full[0].(*mdns.SOA).Serial
	waitFor(t, func() bool { return sec.count("example.com") >= 1 })

	before := sec.count("example.com")
	if _, err := p.AddRecords(bg, "example.com", "api", "AAAA", recs("2001:db8::1"), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return sec.count("example.com") > before })
	inc, err := xfr(t, r.Addr(), signedXFR(mdns.TypeIXFR, serial, xfrKey), secret)
	// new SOA, old SOA, (nothing deleted), new SOA, api AAAA, new SOA
	if err != nil || len(inc) != 5 || inc[1].(*mdns.SOA).Serial != serial || inc[3].Header().Rrtype != mdns.TypeAAAA {
		t.Fatalf("ixfr: %v %v", inc, err)
	}
	cur, err := xfr(t, r.Addr(), signedXFR(mdns.TypeIXFR, inc[0].(*mdns.SOA).Serial, xfrKey), secret)
	if err != nil || len(cur) != 1 {
		t.Fatalf("ixfr when current: %v %v", cur, err)
	}
	unknown, err := xfr(t, r.Addr(), signedXFR(mdns.TypeIXFR, 7, xfrKey), secret)
	if err != nil || len(unknown) != 5 {
		t.Fatalf("ixfr from an unknown serial: %v %v", unknown, err)
	}

	// Refused: unsigned, another key, over UDP.
	if _, err := xfr(t, r.Addr(), signedXFR(mdns.TypeAXFR, 0, ""), nil); err == nil {
		t.Fatal("an unsigned AXFR was served")
	}
	if _, err := xfr(t, r.Addr(), signedXFR(mdns.TypeAXFR, 0, otherKey), map[string]string{otherKey: strings.Repeat("b", 43) + "="}); err == nil {
		t.Fatal("an AXFR signed with another key was served")
	}
	udp := signedXFR(mdns.TypeAXFR, 0, xfrKey)
	in, _, err := (&mdns.Client{Net: "udp", TsigSecret: secret}).Exchange(udp, r.Addr())
	if err != nil || in.Rcode != mdns.RcodeRefused {
		t.Fatalf("axfr over udp: %v %v", in, err)
	}
	for _, want := range []string{"zone transfer refused", "not signed with the secondary's TSIG key", `signed with key \"other-key.\"`, "over UDP"} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("the log lacks %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), xfrSecret) {
		t.Fatal("a secret reached the log")
	}
}

// TestTransferRefusedToOthers: an address that is not a listed secondary
// of the zone is refused even with the right key; a bad signature gets
// NOTAUTH, unsigned.
func TestTransferRefusedToOthers(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "example.com")
	mustZone(t, p, "other.org")
	sec := listenNotify(t)
	var logs syncBuf
	// The secondary takes other.org only; and it sits at 127.0.0.2, so
	// 127.0.0.1 is not it.
	r := startResponder(t, p, &ResponderOptions{Keys: primaryKeys(t), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Secondaries: []Secondary{{Addr: sec.addr, Key: xfrKey, Zones: []string{"other.org"}},
			{Addr: netip.MustParseAddrPort("127.0.0.2:53"), Key: xfrKey}}})
	if _, err := xfr(t, r.Addr(), signedXFR(mdns.TypeAXFR, 0, xfrKey), map[string]string{xfrKey: xfrSecret}); err == nil {
		t.Fatal("a secondary of another zone got the zone")
	}
	if !strings.Contains(logs.String(), "not a secondary of this zone") {
		t.Fatalf("log: %s", logs.String())
	}
	bad := signedXFR(mdns.TypeAXFR, 0, xfrKey)
	c := &mdns.Client{Net: "tcp", TsigSecret: map[string]string{xfrKey: strings.Repeat("c", 43) + "="}}
	if _, _, err := c.Exchange(bad, r.Addr()); err == nil || err.Error() != mdns.ErrAuth.Error() {
		t.Fatalf("bad signature: %v", err)
	}
	// A signed query gets a signed answer.
	q := new(mdns.Msg)
	q.SetQuestion("example.com.", mdns.TypeSOA)
	q.SetTsig(xfrKey, mdns.HmacSHA256, 300, time.Now().Unix())
	in, _, err := (&mdns.Client{Net: "tcp", TsigSecret: map[string]string{xfrKey: xfrSecret}}).Exchange(q, r.Addr())
	if err != nil || in.IsTsig() == nil || len(in.Answer) != 1 {
		t.Fatalf("signed SOA query: %v %v", in, err)
	}
}

// TestSerialPolicies: date-based serials by default, one more per change
// for a zone set to increment.
func TestSerialPolicies(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}
	p, err := New(t.TempDir(), &Options{Now: clk.now, DisableSync: true, ZoneSerialPolicy: map[string]SerialPolicy{"inc.org": SerialIncrement}})
	if err != nil {
		t.Fatal(err)
	}
	serial := func(zone string) uint32 {
		e, err := p.entry(bg, zone)
		if err != nil {
			t.Fatal(err)
		}
		return currentSerial(e.data)
	}
	mustZone(t, p, "date.org")
	mustZone(t, p, "inc.org")
	d0, i0 := serial("date.org"), serial("inc.org")
	if d0 != 2026031401 {
		t.Fatalf("date serial %d", d0)
	}
	for _, z := range []string{"date.org", "inc.org"} {
		if _, err := p.AddRecords(bg, z, "www", "A", recs("198.51.100.1"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if d1, i1 := serial("date.org"), serial("inc.org"); d1 != d0+1 || i1 != i0+1 {
		t.Fatalf("after a change: date %d -> %d, increment %d -> %d", d0, d1, i0, i1)
	}
	if _, err := New(t.TempDir(), &Options{SerialPolicy: "weekly"}); err == nil {
		t.Fatal("an unknown policy was taken")
	}
}

// syncBuf is a bytes.Buffer for a logger written from several goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
