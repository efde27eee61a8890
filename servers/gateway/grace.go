package gateway

import (
	"sync"
	"time"
)

// graceQueue forgets finished calls notifyGrace after their end, as one
// time.AfterFunc per call did, with one timer per link: the ends are
// queued in order (every call gets the same grace), and the timer, armed
// for the oldest, forgets every call whose grace is over and re-arms for
// the next. An end is a value (the call's token), not a closure: one
// allocation less per call.
type graceQueue struct {
	mu     sync.Mutex
	q      []graceEnd
	head   int
	timer  *time.Timer
	armed  bool
	forget func(graceEnd) // set before the first after (link.forget)
}

// graceEnd is a finished call: its token, and whether it counts in the
// link's calls in flight (a relayed call does; a relaying upstream's
// flight, relay.go, does not).
type graceEnd struct {
	at      time.Time
	key     tokKey
	counted bool
}

// after forgets e once grace has passed (not before; a little later when
// the timer is late, as an AfterFunc would be).
func (g *graceQueue) after(grace time.Duration, e graceEnd) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e.at = time.Now().Add(grace)
	g.q = append(g.q, e)
	if g.armed {
		return
	}
	g.armed = true
	if g.timer == nil {
		g.timer = time.AfterFunc(grace, g.sweep)
	} else {
		g.timer.Reset(grace)
	}
}

// sweep forgets the calls whose grace is over and re-arms for the oldest
// left.
func (g *graceQueue) sweep() {
	var due []graceEnd
	g.mu.Lock()
	now := time.Now()
	for g.head < len(g.q) && !g.q[g.head].at.After(now) {
		due = append(due, g.q[g.head])
		g.q[g.head] = graceEnd{}
		g.head++
	}
	if g.head == len(g.q) {
		g.q, g.head = g.q[:0], 0
		g.armed = false
	} else {
		if g.head > len(g.q)/2 { // keep the backing array bounded
			n := copy(g.q, g.q[g.head:])
			clear(g.q[n:])
			g.q, g.head = g.q[:n], 0
		}
		g.timer.Reset(g.q[g.head].at.Sub(now))
	}
	g.mu.Unlock()
	for _, e := range due {
		g.forget(e)
	}
}
