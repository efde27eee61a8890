package gateway

import (
	"sync"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// scrubber removes the credentials the gateway knows (values of secret-named
// variables it passes to children, upstream credentials) — with the egress
// gate's matcher, so in every form the gate finds them in messages — and
// anything a child writes as a secret-named key and a value, from text
// bound for the log or an error.
type scrubber struct {
	mu    sync.RWMutex
	known *egress.Secrets
}

// secretAssign is compiled on first use (lazyRE).
var secretAssign = lazyRE(`(?i)((?:api[_-]?key|token|secret|passw(?:or)?d|credential|authorization|bearer)["']?\s*[:=]?\s*["']?(?:(?:bearer|basic)\s+)?)([^\s"',;]{6,})`)

// add scrubs v from now on; values under 6 bytes are too short to remove
// from a log line without removing ordinary words.
func (s *scrubber) add(v string) {
	if len(v) < 6 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known = s.known.With(v)
}

// secrets is the set of the known credentials.
func (s *scrubber) secrets() *egress.Secrets {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.known
}

func (s *scrubber) text(t string) string {
	s.mu.RLock()
	t, _ = s.known.Scrub(t)
	s.mu.RUnlock()
	return secretAssign().ReplaceAllString(t, "${1}"+untrusted.Redacted)
}
