package httpguard

import (
	"cmp"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

// Flood guard defaults: the Vulnetix edge rule, 100 requests per 10 seconds
// per client address.
const (
	DefaultFloodLimit         = 100
	defaultFloodWindow        = 10 * time.Second
	defaultFloodMaxAddresses  = 65536
	defaultFloodIPv6PrefixLen = 64
)

// FloodOptions configures a flood guard. Zero fields take the defaults.
type FloodOptions struct {
	// Limit is the number of requests allowed per address per window.
	Limit int
	// Window is the length of each address's counting window.
	Window time.Duration
	// MaxAddresses caps the addresses tracked; when full, expired entries
	// and then the oldest window are evicted, so memory stays bounded.
	MaxAddresses int
	// IPv6PrefixLen groups IPv6 clients by prefix (default /64, what one
	// subscriber usually holds). IPv4 clients are counted per address.
	IPv6PrefixLen int
	// ClientAddr extracts the client address. The default parses
	// r.RemoteAddr; set it only behind a trusted proxy. Requests whose
	// address cannot be found share one bucket.
	ClientAddr func(*http.Request) (netip.Addr, bool)
	// Now is the clock; the default is time.Now.
	Now func() time.Time
	// Setting names the operator setting that changes the limit (a flag
	// such as "--flood-limit"); refusals name it. Empty: not named.
	Setting string
}

// floodGuard is a per-client-address flood guard: a fixed window per address
// that starts with the address's first request and resets fully when it
// ends (so the refusal can say exactly when it resets). It is cheap and runs
// before anything reads the request. The zero value applies the defaults.
//
// A fixed window was chosen over golang.org/x/time/rate: the refusal must say
// "Resets in Ns." and the limit reads as "N per window"; a token bucket of
// size N refilling N per window admits up to 2N in the first window and has
// no reset moment to report. Each entry is two words and a count.
type floodGuard struct {
	once sync.Once
	opts FloodOptions
	err  error

	mu         sync.Mutex
	entries    map[netip.Addr]*floodEntry
	head, tail *floodEntry // ordered by window start, oldest first
}

type floodEntry struct {
	key        netip.Addr
	start      time.Time
	count      int
	prev, next *floodEntry
}

// rateLimitError is the error floodGuard.Check returns; it wraps errRateLimited.
type rateLimitError struct {
	// RetryAfter is the time until the address's window resets.
	RetryAfter time.Duration
	// Limit, Window and Setting describe the limit that refused.
	Limit   int
	Window  time.Duration
	Setting string
}

func (e *rateLimitError) Error() string {
	return fmt.Sprintf("rate limited: resets in %ds", ratelimit.RetryAfterSeconds(e.RetryAfter))
}

// decision is the refusal as the ratelimit package shapes every rate-limit
// refusal, so the flood guard and the per-principal limit answer alike.
func (e *rateLimitError) decision() ratelimit.Decision {
	return ratelimit.Decision{RetryAfter: e.RetryAfter, Limit: e.Limit, Window: e.Window,
		Scope: ratelimit.ScopeAddress, Setting: e.Setting}
}

// writeFloodRefusal answers 429 with Retry-After and ratelimit.Refusal's
// JSON-RPC error.
func writeFloodRefusal(w http.ResponseWriter, e *rateLimitError) {
	d := e.decision()
	ref := ratelimit.Refusal(d)
	w.Header().Set("Retry-After", ratelimit.RetryAfterHeader(d))
	WriteError(w, http.StatusTooManyRequests, nil, int(ref.Code), ref.Message, ref.Data)
}

// Unwrap makes errors.Is(err, errRateLimited) hold.
func (e *rateLimitError) Unwrap() error { return errRateLimited }

// newFlood returns a flood guard; opts may be nil. It fails on negative
// values or a prefix length over 128.
func newFlood(opts *FloodOptions) (*floodGuard, error) {
	f := &floodGuard{}
	if opts != nil {
		f.opts = *opts
	}
	f.init()
	if f.err != nil {
		return nil, f.err
	}
	return f, nil
}

func (f *floodGuard) init() {
	f.once.Do(func() {
		o := &f.opts
		if o.Limit < 0 || o.Window < 0 || o.MaxAddresses < 0 || o.IPv6PrefixLen < 0 || o.IPv6PrefixLen > 128 {
			f.err = fmt.Errorf("flood options: negative value or prefix over 128: %w", errInvalidConfig)
		}
		o.Limit = cmp.Or(o.Limit, DefaultFloodLimit)
		o.Window = cmp.Or(o.Window, defaultFloodWindow)
		o.MaxAddresses = cmp.Or(o.MaxAddresses, defaultFloodMaxAddresses)
		o.IPv6PrefixLen = cmp.Or(o.IPv6PrefixLen, defaultFloodIPv6PrefixLen)
		if o.ClientAddr == nil {
			o.ClientAddr = remoteAddr
		}
		if o.Now == nil {
			o.Now = time.Now
		}
		f.entries = make(map[netip.Addr]*floodEntry)
	})
}

// remoteAddr parses r.RemoteAddr, the connection's peer address.
func remoteAddr(r *http.Request) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr(), true
	}
	a, err := netip.ParseAddr(r.RemoteAddr)
	return a, err == nil
}

// floodKey is the bucket an address counts in: IPv4 (and IPv4-mapped IPv6)
// addresses by themselves, IPv6 addresses by their first bits bits, zones
// dropped.
func floodKey(addr netip.Addr, bits int) netip.Addr {
	addr = addr.Unmap()
	if !addr.Is6() {
		return addr
	}
	p, err := addr.WithZone("").Prefix(bits)
	if err != nil {
		return addr.WithZone("")
	}
	return p.Addr()
}

// Allow counts one request from addr at now and reports whether it is
// within the limit; when it is not, retryAfter is the time to the reset.
func (f *floodGuard) Allow(addr netip.Addr, now time.Time) (ok bool, retryAfter time.Duration) {
	f.init()
	key := floodKey(addr, f.opts.IPv6PrefixLen)
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.entries[key]
	switch {
	case e == nil:
		e = f.insert(key, now)
	case now.Sub(e.start) >= f.opts.Window || now.Before(e.start):
		e.start, e.count = now, 0
		f.unlink(e)
		f.append(e)
	}
	if e.count >= f.opts.Limit {
		return false, e.start.Add(f.opts.Window).Sub(now)
	}
	e.count++
	return true, 0
}

// Check counts the request and returns a *rateLimitError when its address
// is over the limit. Unlike the other guards' Check it has an effect: it
// spends one request of the address's window.
func (f *floodGuard) Check(r *http.Request) error {
	f.init()
	addr, _ := f.opts.ClientAddr(r)
	if ok, retry := f.Allow(addr, f.opts.Now()); !ok {
		return &rateLimitError{RetryAfter: retry, Limit: f.opts.Limit, Window: f.opts.Window, Setting: f.opts.Setting}
	}
	return nil
}

// Handler answers 429 with Retry-After and ratelimit.Refusal's JSON-RPC
// error (-32000, data.error "rate_limited", data.scope "address", a message
// that names the limit and its setting and ends "Resets in Ns.") when the
// client's address is over the limit, and otherwise calls next.
func (f *floodGuard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f.Check(r); err != nil {
			writeFloodRefusal(w, err.(*rateLimitError))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Len reports the number of addresses tracked.
func (f *floodGuard) Len() int {
	f.init()
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.entries)
}

const maxPurgePerInsert = 16

func (f *floodGuard) insert(key netip.Addr, now time.Time) *floodEntry {
	for i := 0; i < maxPurgePerInsert && f.head != nil && now.Sub(f.head.start) >= f.opts.Window; i++ {
		f.remove(f.head)
	}
	if len(f.entries) >= f.opts.MaxAddresses {
		f.remove(f.head)
	}
	e := &floodEntry{key: key, start: now}
	f.entries[key] = e
	f.append(e)
	return e
}

func (f *floodGuard) remove(e *floodEntry) {
	f.unlink(e)
	delete(f.entries, e.key)
}

func (f *floodGuard) append(e *floodEntry) {
	e.prev, e.next = f.tail, nil
	if f.tail != nil {
		f.tail.next = e
	} else {
		f.head = e
	}
	f.tail = e
}

func (f *floodGuard) unlink(e *floodEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		f.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		f.tail = e.prev
	}
	e.prev, e.next = nil, nil
}
