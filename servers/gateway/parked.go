package gateway

// The upstream calls of relayed questions (relay.go): those of a relaying
// upstream in flight (flights, one set per link) and those parked while the
// client answers a question (parking, one per gateway, at most MaxParked).

import (
	"sync"
	"time"
)

// flights are a link's upstream calls in flight.
type flights struct {
	mu sync.Mutex
	m  map[*flight]struct{}
}

func (s *flights) add(f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[*flight]struct{}{}
	}
	s.m[f] = struct{}{}
}

func (s *flights) remove(f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, f)
}

// only is the one flight, or nil when there are none or several.
// cancelAll ends every upstream call in flight, parked ones included: a
// gateway that closes does not wait for answers that will not come.
func (s *flights) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f := range s.m {
		f.cancel()
	}
}

func (s *flights) only() *flight {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) != 1 {
		return nil
	}
	for f := range s.m {
		return f
	}
	return nil
}

// parking holds the parked flights by id.
type parking struct {
	mu   sync.Mutex
	m    map[string]*flight
	wait time.Duration // DefaultRelayWait when zero
}

func (p *parking) put(id string, f *flight) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= MaxParked {
		return false
	}
	if p.m == nil {
		p.m = map[string]*flight{}
	}
	p.m[id] = f
	return true
}

func (p *parking) take(id string) *flight {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.m[id]
	delete(p.m, id)
	return f
}

// ids are the parked flights' ids.
func (p *parking) ids() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.m))
	for id := range p.m {
		out = append(out, id)
	}
	return out
}

func (p *parking) has(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.m[id]
	return ok
}

func (p *parking) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

func (p *parking) relayWait() time.Duration {
	if p.wait > 0 {
		return p.wait
	}
	return DefaultRelayWait
}
