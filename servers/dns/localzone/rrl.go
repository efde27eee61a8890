package localzone

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/listen"
)

// Response-rate limiting (RRL). A UDP query's source address can be
// forged, so an open responder amplifies: a 40-byte query can fetch a
// 1,000-byte answer sent to a victim. The Responder therefore limits the
// UDP responses sent to one source (an IPv4 /24 or IPv6 /56, as BIND's RRL
// groups them) to a rate with a burst of the same size. Past it, every
// slip-th response is sent truncated (TC set, no records: no larger than
// the query, and a real client retries over TCP, which is not limited) and
// the others are dropped. TCP needs a handshake, so it cannot be forged.

// Defaults of the rate limit.
const (
	// DefaultResponseRate is the UDP responses per second per source.
	DefaultResponseRate = 50
	// DefaultSlip: every DefaultSlip-th limited response is sent truncated.
	DefaultSlip = 2
	// maxRRLSources bounds the table of sources; when full it starts over.
	maxRRLSources = 1 << 16
)

type bucket struct {
	tokens  float64
	last    time.Time
	limited int // responses limited since the bucket last had tokens
}

// rrl is the table of per-source buckets.
type rrl struct {
	rate float64
	slip int
	now  func() time.Time

	mu      sync.Mutex
	sources map[string]*bucket
}

// verdict is what to do with one UDP response.
type verdict int

const (
	send verdict = iota
	slip         // send truncated
	drop
)

func newRRL(rate, slipEvery int, now func() time.Time) *rrl {
	return &rrl{rate: float64(rate), slip: slipEvery, now: now, sources: map[string]*bucket{}}
}

// check charges one response to addr's source.
func (l *rrl) check(addr net.Addr) verdict {
	if l == nil {
		return send
	}
	key := sourceKey(addr)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.sources[key]
	if b == nil {
		if len(l.sources) >= maxRRLSources {
			clear(l.sources)
		}
		b = &bucket{tokens: l.rate, last: now}
		l.sources[key] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(l.rate, b.tokens+el*l.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		b.limited = 0
		return send
	}
	b.limited++
	if l.slip > 0 && b.limited%l.slip == 0 {
		return slip
	}
	return drop
}

// sourceKey groups addresses as RRL does: IPv4 by /24, IPv6 by /56.
func sourceKey(addr net.Addr) string {
	ua, ok := addr.(*net.UDPAddr)
	if !ok {
		return addr.String()
	}
	if v4 := ua.IP.To4(); v4 != nil {
		return v4.Mask(net.CIDRMask(24, 32)).String()
	}
	return ua.IP.Mask(net.CIDRMask(56, 128)).String()
}

// ListenAddr checks a -dns-listen value and returns the address to bind,
// and whether it reaches beyond loopback. "" is DefaultResponderAddr; the
// rest is read as every listener's address is (listen.Parse: a bare port,
// ":5353" or "5353", means loopback, as it does for the HTTP listener); in
// addition a host must be an IP address or "localhost". Anything else is an
// error.
func ListenAddr(addr string) (string, bool, error) {
	if addr == "" {
		return DefaultResponderAddr, false, nil
	}
	bind, err := listen.Parse(addr)
	if err != nil {
		return "", false, fmt.Errorf("DNS listen address %w", err)
	}
	if host, _, _ := net.SplitHostPort(bind); host != "localhost" && net.ParseIP(host) == nil {
		return "", false, fmt.Errorf("DNS listen address %q: the host must be an IP address or localhost", addr)
	}
	return bind, !listen.Loopback(bind), nil
}
