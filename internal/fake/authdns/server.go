package authdns

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// Options configure the fake. The zero value serves no key: every update
// and transfer is refused.
type Options struct {
	// Keys are the TSIG keys the server accepts, name (absolute, lower
	// case) to base64 secret; hmac-sha256 and hmac-sha512 are both taken.
	Keys map[string]string
	// PerMessage is how many records an AXFR message carries; default 100.
	PerMessage int
	// Modes are the hostile modes it starts in (SetModes changes them).
	Modes
}

// Modes are the hostile behaviours of the fake.
type Modes struct {
	// Huge, when above zero, makes every AXFR stream the zone's SOA, that
	// many generated TXT records and the SOA, none of them held in memory.
	Huge int
	// TruncateAfter, when above zero, ends every transfer after that many
	// messages by closing the connection, without the closing SOA.
	TruncateAfter int
	// ForgeTSIG signs answers with a secret other than the key's.
	ForgeTSIG bool
	// Unsigned answers signed requests without a signature.
	Unsigned bool
}

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	opts  Options
	addr  string
	modes atomic.Pointer[Modes]
	mu    sync.Mutex
	zones map[string]*zone // by origin, "example.com."

	// BeforeUpdate, when set, runs as an UPDATE arrives, with no lock held,
	// before the prerequisites are checked.
	BeforeUpdate func()

	updates, axfrs, ixfrs atomic.Int64
	hugeSent              atomic.Int64
}

// zone is one zone: its records (owners lower case, the SOA first) and the
// journal of its changes.
type zone struct {
	origin  string
	rrs     []mdns.RR
	journal []change
}

// change is one journal entry: the records deleted and added between two
// serials.
type change struct {
	from, to uint32
	del, add []mdns.RR
}

// Start runs a fake on a free loopback port (UDP and TCP) until the test
// ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, stop, err := Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s
}

// Listen runs a fake on a free loopback port and returns it with the
// function that stops it (for benchmarks and programs; tests use Start).
func Listen(opts Options) (*Server, func(), error) {
	if opts.PerMessage <= 0 {
		opts.PerMessage = 100
	}
	s := &Server{opts: opts, zones: map[string]*zone{}}
	s.SetModes(opts.Modes)
	pc, l, err := listen()
	if err != nil {
		return nil, nil, err
	}
	s.addr = l.Addr().String()
	ring := keyring{keys: opts.Keys, forge: func() bool { return s.mode().ForgeTSIG }}
	var wg sync.WaitGroup
	wg.Add(2)
	udp := &mdns.Server{PacketConn: pc, Handler: s, TsigProvider: ring, NotifyStartedFunc: wg.Done, MsgAcceptFunc: accept}
	tcp := &mdns.Server{Listener: l, Handler: s, TsigProvider: ring, NotifyStartedFunc: wg.Done, MsgAcceptFunc: accept}
	go func() { _ = udp.ActivateAndServe() }()
	go func() { _ = tcp.ActivateAndServe() }()
	wg.Wait()
	return s, func() { _ = udp.Shutdown(); _ = tcp.Shutdown() }, nil
}

// accept lets updates through (miekg/dns's default refuses them); the
// handler checks every section itself.
func accept(dh mdns.Header) mdns.MsgAcceptAction {
	const qr = 1 << 15
	if dh.Bits&qr != 0 {
		return mdns.MsgIgnore
	}
	return mdns.MsgAccept
}

// listen binds UDP and TCP on one free loopback port.
func listen() (net.PacketConn, net.Listener, error) {
	var last error
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l, nil
		}
		pc.Close()
		last = err
	}
	return nil, nil, last
}

// SetModes switches the hostile modes for the requests that follow.
func (s *Server) SetModes(m Modes) { s.modes.Store(&m) }

func (s *Server) mode() Modes { return *s.modes.Load() }

// Addr is the server's address, host:port.
func (s *Server) Addr() string { return s.addr }

// Counts reports how many updates, AXFRs and IXFRs the server has answered.
func (s *Server) Counts() (updates, axfrs, ixfrs int64) {
	return s.updates.Load(), s.axfrs.Load(), s.ixfrs.Load()
}

// HugeSent is how many generated records Huge transfers have handed to
// their connections, for tests that check a client stopped reading.
func (s *Server) HugeSent() int64 { return s.hugeSent.Load() }

// AddZone parses a zone file (its first record the SOA, whose owner is the
// origin) and serves it, replacing a zone of that name.
func (s *Server) AddZone(text string) error {
	zp := mdns.NewZoneParser(strings.NewReader(text), "", "")
	zp.SetIncludeAllowed(false)
	var rrs []mdns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		rr.Header().Name = strings.ToLower(rr.Header().Name)
		rrs = append(rrs, rr)
	}
	if err := zp.Err(); err != nil {
		return err
	}
	if len(rrs) == 0 || rrs[0].Header().Rrtype != mdns.TypeSOA {
		return fmt.Errorf("authdns: the zone file must start with its SOA")
	}
	z := &zone{origin: rrs[0].Header().Name}
	for _, rr := range rrs {
		if !mdns.IsSubDomain(z.origin, rr.Header().Name) {
			return fmt.Errorf("authdns: %s is outside %s", rr.Header().Name, z.origin)
		}
		if !z.has(rr) {
			z.rrs = append(z.rrs, rr)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.zones[z.origin] = z
	return nil
}

// Records returns copies of the records of name and type (mdns.TypeANY:
// every type) in the zone holding name.
func (s *Server) Records(name string, typ uint16) []mdns.RR {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.find(name)
	if z == nil {
		return nil
	}
	var out []mdns.RR
	for _, rr := range z.set(strings.ToLower(mdns.Fqdn(name)), typ) {
		out = append(out, mdns.Copy(rr))
	}
	return out
}

// Serial is the SOA serial of the zone with that origin (0: no such zone).
func (s *Server) Serial(origin string) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if z := s.zones[strings.ToLower(mdns.Fqdn(origin))]; z != nil {
		return z.serial()
	}
	return 0
}

// Change edits a zone as an operator would, outside any update: each
// record of add is added, each of del removed, and the serial bumped and
// journalled as for an update.
func (s *Server) Change(origin string, del, add []mdns.RR) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zones[strings.ToLower(mdns.Fqdn(origin))]
	if z == nil {
		return fmt.Errorf("authdns: no zone %s", origin)
	}
	tx := z.begin()
	for _, rr := range del {
		tx.remove(rr)
	}
	for _, rr := range add {
		rr = mdns.Copy(rr)
		rr.Header().Name = strings.ToLower(rr.Header().Name)
		tx.addRR(rr)
	}
	tx.commit()
	return nil
}

// find returns the zone holding name (the longest origin), or nil.
func (s *Server) find(name string) *zone {
	name = strings.ToLower(mdns.Fqdn(name))
	for {
		if z := s.zones[name]; z != nil {
			return z
		}
		i, end := mdns.NextLabel(name, 0)
		if end {
			return nil
		}
		name = name[i:]
	}
}

func (z *zone) serial() uint32 { return z.rrs[0].(*mdns.SOA).Serial }

// set returns the records of owner and type (TypeANY: all), not copied.
func (z *zone) set(owner string, typ uint16) []mdns.RR {
	var out []mdns.RR
	for _, rr := range z.rrs {
		if rr.Header().Name == owner && (typ == mdns.TypeANY || rr.Header().Rrtype == typ) {
			out = append(out, rr)
		}
	}
	return out
}

// has reports whether the zone holds a record with rr's owner, type and data.
func (z *zone) has(rr mdns.RR) bool {
	for _, r := range z.rrs {
		if mdns.IsDuplicate(r, rr) {
			return true
		}
	}
	return false
}

// keyring signs and verifies with Options.Keys; forge signs with a wrong
// secret.
type keyring struct {
	keys  map[string]string
	forge func() bool
}

func (k keyring) mac(msg []byte, t *mdns.TSIG, forge bool) ([]byte, error) {
	b64, ok := k.keys[strings.ToLower(t.Hdr.Name)]
	if !ok {
		return nil, mdns.ErrSecret
	}
	secret, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	if forge {
		secret = append([]byte("forged"), secret...)
	}
	var h hash.Hash
	switch mdns.CanonicalName(t.Algorithm) {
	case mdns.HmacSHA256:
		h = hmac.New(sha256.New, secret)
	case mdns.HmacSHA512:
		h = hmac.New(sha512.New, secret)
	default:
		return nil, mdns.ErrKeyAlg
	}
	h.Write(msg)
	return h.Sum(nil), nil
}

func (k keyring) Generate(msg []byte, t *mdns.TSIG) ([]byte, error) { return k.mac(msg, t, k.forge()) }

func (k keyring) Verify(msg []byte, t *mdns.TSIG) error {
	want, err := k.mac(msg, t, false)
	if err != nil {
		return err
	}
	got, err := hex.DecodeString(t.MAC)
	if err != nil || !hmac.Equal(got, want) {
		return mdns.ErrSig
	}
	return nil
}

// reply starts the answer to req and signs it when req was signed with a
// key that verified (and the hostile mode does not forbid it).
func (s *Server) reply(w mdns.ResponseWriter, req *mdns.Msg) *mdns.Msg {
	m := new(mdns.Msg)
	m.SetReply(req)
	if t := req.IsTsig(); t != nil && w.TsigStatus() == nil && !s.mode().Unsigned {
		m.SetTsig(t.Hdr.Name, t.Algorithm, 300, time.Now().Unix())
	}
	return m
}

// ServeDNS answers one message.
func (s *Server) ServeDNS(w mdns.ResponseWriter, req *mdns.Msg) {
	if t := req.IsTsig(); t != nil && w.TsigStatus() != nil {
		s.badSignature(w, req, t)
		return
	}
	switch {
	case req.Opcode == mdns.OpcodeUpdate:
		s.update(w, req)
	case req.Opcode != mdns.OpcodeQuery || len(req.Question) != 1:
		m := new(mdns.Msg)
		m.SetRcode(req, mdns.RcodeNotImplemented)
		_ = w.WriteMsg(m)
	case req.Question[0].Qtype == mdns.TypeAXFR || req.Question[0].Qtype == mdns.TypeIXFR:
		s.transfer(w, req)
	default:
		s.query(w, req)
	}
}

// badSignature answers a request whose TSIG failed as RFC 8945 §5.2 says:
// NOTAUTH, with a TSIG record that carries the error (BADKEY for a key the
// server lacks, else BADSIG) and no MAC.
func (s *Server) badSignature(w mdns.ResponseWriter, req *mdns.Msg, t *mdns.TSIG) {
	m := new(mdns.Msg)
	m.SetRcode(req, mdns.RcodeNotAuth)
	code := uint16(mdns.RcodeBadSig)
	if _, ok := s.opts.Keys[strings.ToLower(t.Hdr.Name)]; !ok {
		code = mdns.RcodeBadKey
	}
	m.Extra = append(m.Extra, &mdns.TSIG{Hdr: mdns.RR_Header{Name: t.Hdr.Name, Rrtype: mdns.TypeTSIG, Class: mdns.ClassANY},
		Algorithm: t.Algorithm, TimeSigned: t.TimeSigned, Fudge: t.Fudge, OrigId: req.Id, Error: code})
	b, err := m.Pack()
	if err == nil {
		_, _ = w.Write(b)
	}
}

// query answers an exact name with AA, or NXDOMAIN/NODATA with the SOA.
func (s *Server) query(w mdns.ResponseWriter, req *mdns.Msg) {
	m := s.reply(w, req)
	q := req.Question[0]
	s.mu.Lock()
	z := s.find(q.Name)
	if z == nil {
		s.mu.Unlock()
		m.Rcode = mdns.RcodeRefused
		_ = w.WriteMsg(m)
		return
	}
	m.Authoritative = true
	owner := strings.ToLower(q.Name)
	for _, rr := range z.set(owner, q.Qtype) {
		m.Answer = append(m.Answer, mdns.Copy(rr))
	}
	if len(m.Answer) == 0 {
		if len(z.set(owner, mdns.TypeANY)) == 0 && !z.above(owner) {
			m.Rcode = mdns.RcodeNameError
		}
		m.Ns = []mdns.RR{mdns.Copy(z.rrs[0])}
	}
	s.mu.Unlock()
	_ = w.WriteMsg(m)
}

// above reports whether some record is owned below owner (an empty
// non-terminal exists).
func (z *zone) above(owner string) bool {
	for _, rr := range z.rrs {
		if n := rr.Header().Name; n != owner && mdns.IsSubDomain(owner, n) {
			return true
		}
	}
	return false
}
