package localzone

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
)

// Responder defaults.
const (
	// DefaultResponderAddr is where ListenAndServe listens when given "".
	DefaultResponderAddr = "127.0.0.1:5353"
	// DefaultUDPSize is the largest UDP answer sent by default (the
	// DNS Flag Day 2020 size, which avoids IP fragmentation).
	DefaultUDPSize = 1232
	// DefaultRecheckInterval is how often zone files are checked for
	// changes made outside the Provider (editors, other processes).
	DefaultRecheckInterval = time.Second
)

// ResponderOptions configures a Responder. The zero value is usable.
type ResponderOptions struct {
	// UDPSize caps UDP answers (and is the EDNS0 size advertised); an
	// answer that does not fit the client's size, or this one, is sent
	// truncated with TC set so the client retries over TCP. Default
	// DefaultUDPSize; at least 512.
	UDPSize int
	// RecheckInterval is how often zone files are checked for outside
	// changes. Changes made through the Provider are seen by the next
	// query without waiting. Default DefaultRecheckInterval.
	RecheckInterval time.Duration
	// ResponseRate limits the UDP responses per second to one source (an
	// IPv4 /24 or IPv6 /56), with a burst of the same size; see rrl.go.
	// Default DefaultResponseRate.
	ResponseRate int
	// Slip: every Slip-th response over the rate is sent truncated (the
	// client retries over TCP), the others are dropped; 1 truncates every
	// one. Default DefaultSlip.
	Slip int
	// DisableRateLimit turns response-rate limiting off (benchmarks).
	DisableRateLimit bool
	// Secondaries make the responder the hidden primary of their zones:
	// they alone may transfer them (AXFR, IXFR), over TCP, signed with
	// their key, and each hears NOTIFY of every new serial (primary.go).
	// The caller checks them with CheckSecondaries.
	Secondaries []Secondary
	// Keys are the TSIG keys of the secondaries; the responder verifies
	// signed requests against them and signs its answers to them.
	Keys *tsig.Keyring
	// Logger hears of refused transfers, bad signatures and NOTIFY;
	// nothing is logged when nil.
	Logger *slog.Logger
	// NotifyWait is how long a NOTIFY waits for its first retry; it
	// doubles with each. Default one second.
	NotifyWait time.Duration
	// Now is the clock of the rate limiter and of DNSSEC signatures;
	// default time.Now.
	Now func() time.Time
}

// Responder is an authoritative DNS server for the Provider's primary
// zones, over UDP and TCP.
//
// It answers with AA set from the zone files; NXDOMAIN and NODATA carry the
// SOA (TTL min(SOA TTL, MINIMUM)); CNAMEs are followed inside the zone;
// wildcards follow RFC 4592; NS records below the apex make referrals (no
// AA, glue in the additional section); EDNS0 is echoed. Names outside every
// zone and other classes than IN are REFUSED, and so are zone transfers
// (AXFR, IXFR) but to the secondaries of a hidden primary (primary.go).
// ANY gets one RRset of the name, the one with the lowest type (RFC 8482
// §4.1), over UDP and TCP alike. Secondary zones are not served: this
// provider does not transfer them. A zone file that stops parsing keeps
// being served as it last parsed; one that never parsed answers SERVFAIL.
type Responder struct {
	p       *Provider
	udpSize int
	recheck time.Duration
	limit   *rrl         // nil: no rate limit
	opt     [2]*mdns.OPT // the OPT record of answers, without and with DO
	now     func() time.Time

	secondaries []Secondary
	keys        *tsig.Keyring
	log         *slog.Logger
	notifyWait  time.Duration

	snap      atomic.Pointer[snapshot]
	refreshMu sync.Mutex
	addr      atomic.Pointer[string]
	ready     chan struct{}
	readyOnce sync.Once
}

// snapshot is the set of zones answered from at one time.
type snapshot struct {
	gen   uint64                // Provider generation it was built at
	zones map[string]*zoneIndex // by origin ("example.com.")
	files map[string]indexedFile
	// journals are the zones' recent changes, by origin, for IXFR (kept
	// only for a hidden primary).
	journals map[string][]change
}

type indexedFile struct {
	key statKey
	idx *zoneIndex
}

// NewResponder returns a Responder answering from p's zones.
func NewResponder(p *Provider, opts *ResponderOptions) *Responder {
	var o ResponderOptions
	if opts != nil {
		o = *opts
	}
	if o.UDPSize <= 0 {
		o.UDPSize = DefaultUDPSize
	}
	o.UDPSize = min(max(o.UDPSize, mdns.MinMsgSize), 65535)
	if o.RecheckInterval <= 0 {
		o.RecheckInterval = DefaultRecheckInterval
	}
	r := &Responder{p: p, udpSize: o.UDPSize, recheck: o.RecheckInterval, ready: make(chan struct{}),
		secondaries: slices.Clone(o.Secondaries), keys: o.Keys, log: cmp.Or(o.Logger, discard), notifyWait: cmp.Or(o.NotifyWait, time.Second)}
	r.now = o.Now
	if r.now == nil {
		r.now = time.Now
	}
	if !o.DisableRateLimit {
		r.limit = newRRL(cmp.Or(max(o.ResponseRate, 0), DefaultResponseRate), cmp.Or(max(o.Slip, 0), DefaultSlip), r.now)
	}
	for i := range r.opt {
		opt := &mdns.OPT{Hdr: mdns.RR_Header{Name: ".", Rrtype: mdns.TypeOPT}}
		opt.SetUDPSize(uint16(o.UDPSize))
		opt.SetDo(i == 1)
		r.opt[i] = opt
	}
	return r
}

// Addr is the address the Responder listens on (UDP and TCP share it),
// "" before ListenAndServe has bound it.
func (r *Responder) Addr() string {
	if a := r.addr.Load(); a != nil {
		return *a
	}
	return ""
}

// Ready is closed once ListenAndServe answers on both transports.
func (r *Responder) Ready() <-chan struct{} { return r.ready }

// ServeDNS answers one query; it makes the Responder an mdns.Handler.
// UDP responses are rate-limited per source (rrl.go).
func (r *Responder) ServeDNS(w mdns.ResponseWriter, req *mdns.Msg) {
	if t := req.IsTsig(); t != nil && w.TsigStatus() != nil {
		r.badSignature(w, req, t)
		return
	}
	if len(req.Question) == 1 && (req.Question[0].Qtype == mdns.TypeAXFR || req.Question[0].Qtype == mdns.TypeIXFR) {
		r.transfer(w, req)
		return
	}
	_, udp := w.RemoteAddr().(*net.UDPAddr)
	if udp {
		switch r.limit.check(w.RemoteAddr()) {
		case drop:
			return
		case slip:
			m := new(mdns.Msg)
			m.SetReply(req)
			m.Truncated = true
			_ = w.WriteMsg(m)
			return
		}
	}
	m := r.answer(r.current(), req, udp)
	r.sign(w, req, m)
	_ = w.WriteMsg(m)
}

// current returns the snapshot to answer from, rebuilding it first when the
// Provider changed a zone since it was built.
func (r *Responder) current() *snapshot {
	if s := r.snap.Load(); s != nil && s.gen == r.p.generation() {
		return s
	}
	return r.refresh(false)
}

// refresh rebuilds the snapshot, re-parsing only zone files whose statKey
// changed. Without force it returns early when the snapshot is current.
func (r *Responder) refresh(force bool) *snapshot {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	gen := r.p.generation()
	cur := r.snap.Load()
	if cur != nil && cur.gen == gen && !force {
		return cur
	}
	next := &snapshot{gen: gen, zones: map[string]*zoneIndex{}, files: map[string]indexedFile{}, journals: map[string][]change{}}
	files, err := os.ReadDir(r.p.store.dir)
	if err != nil && cur != nil {
		return cur
	}
	for _, f := range files {
		zone, ok := strings.CutSuffix(f.Name(), zoneSuffix)
		if !ok || !validZoneFileName(zone) {
			continue
		}
		if e, ok := r.index(cur, zone); ok {
			next.files[zone] = e
			next.zones[e.idx.origin] = e.idx
			r.journal(cur, next, zone, e.idx)
		}
	}
	r.snap.Store(next)
	return next
}

// journal carries a zone's journal into the next snapshot, with the
// change from the index before when there is one (hidden primary only).
func (r *Responder) journal(cur, next *snapshot, zone string, idx *zoneIndex) {
	if len(r.secondaries) == 0 || cur == nil {
		return
	}
	origin := idx.origin
	j := cur.journals[origin]
	if old := cur.files[zone].idx; old != nil && old != idx && !old.broken && !idx.broken {
		if c, ok := diff(old, idx); ok {
			j = appendChange(j, c)
		}
	}
	if j != nil {
		next.journals[origin] = j
	}
}

// index returns the index of one zone file: the old one when the file is
// unchanged or no longer parses, a fresh one otherwise.
func (r *Responder) index(cur *snapshot, zone string) (indexedFile, bool) {
	fi, err := os.Stat(r.p.store.dir + string(os.PathSeparator) + zoneFile(zone))
	if err != nil {
		return indexedFile{}, false
	}
	key := keyOf(fi)
	var old indexedFile
	if cur != nil {
		old = cur.files[zone]
		if old.idx != nil && old.key == key {
			return old, true
		}
	}
	idx, err := readIndex(r.p.store.dir, zone)
	if err == nil {
		idx, err = r.signed(idx, old.idx)
	}
	switch {
	case err == nil:
		return indexedFile{key: key, idx: idx}, true
	case old.idx != nil && !old.idx.broken:
		return old, true // keep serving what last parsed; retried next time
	}
	return indexedFile{key: key, idx: &zoneIndex{origin: zone + ".", broken: true}}, true
}

// ListenAndServe answers on addr (read by ListenAddr: DefaultResponderAddr
// when "", loopback for a bare port) over UDP and TCP until ctx ends; port 0
// picks a free port, shared by both (see Addr). It returns nil after ctx
// ends, or the error that stopped a server.
func (r *Responder) ListenAndServe(ctx context.Context, addr string) error {
	addr, _, err := ListenAddr(addr)
	if err != nil {
		return err
	}
	pc, l, err := listenBoth(addr)
	if err != nil {
		return err
	}
	bound := pc.LocalAddr().String()
	r.addr.Store(&bound)
	r.refresh(true)
	var started sync.WaitGroup
	started.Add(2)
	udp := &mdns.Server{PacketConn: pc, Handler: r, UDPSize: 4096, NotifyStartedFunc: started.Done}
	tcp := &mdns.Server{Listener: l, Handler: r, NotifyStartedFunc: started.Done}
	if r.keys != nil {
		udp.TsigProvider, tcp.TsigProvider = r.keys, r.keys
	}
	errc := make(chan error, 2)
	go func() { errc <- udp.ActivateAndServe() }()
	go func() { errc <- tcp.ActivateAndServe() }()
	go func() {
		started.Wait()
		r.readyOnce.Do(func() { close(r.ready) })
	}()
	if len(r.secondaries) > 0 {
		go r.notifyLoop(ctx)
	} else {
		go r.recheckLoop(ctx)
	}
	select {
	case <-ctx.Done():
		started.Wait()
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = udp.ShutdownContext(sctx)
	_ = tcp.ShutdownContext(sctx)
	return err
}

// recheckLoop looks for outside changes to zone files until ctx ends.
func (r *Responder) recheckLoop(ctx context.Context) {
	t := time.NewTicker(r.recheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.refresh(true)
			r.resignDue(ctx)
		}
	}
}

// listenBoth binds UDP and TCP on the same address. With port 0 it retries
// until the kernel's UDP pick is free for TCP too.
func listenBoth(addr string) (net.PacketConn, net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("responder address %q: %w", addr, err)
	}
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("listening on udp %s: %w", addr, err)
		}
		_, bound, _ := net.SplitHostPort(pc.LocalAddr().String())
		l, err := net.Listen("tcp", net.JoinHostPort(host, bound))
		if err == nil {
			return pc, l, nil
		}
		pc.Close()
		lastErr = err
		if port != "0" {
			break
		}
	}
	return nil, nil, fmt.Errorf("listening on tcp %s: %w", addr, errors.Join(lastErr))
}
