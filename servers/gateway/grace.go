package gateway

import (
	"sync"
	"time"
)

// graceQueue forgets finished calls notifyGrace after their end, as one
// time.AfterFunc per call did, with one timer per link: the ends are
// queued in order (every call gets the same grace), and the timer, armed
// for the oldest, forgets every call whose grace is over and re-arms for
// the next.
type graceQueue struct {
	mu    sync.Mutex
	q     []graceEnd
	head  int
	timer *time.Timer
	armed bool
}

type graceEnd struct {
	at     time.Time
	forget func()
}

// after runs forget once notifyGrace has passed (not before; a little
// later when the timer is late, as an AfterFunc would be).
func (g *graceQueue) after(grace time.Duration, forget func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.q = append(g.q, graceEnd{at: time.Now().Add(grace), forget: forget})
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
	var due []func()
	g.mu.Lock()
	now := time.Now()
	for g.head < len(g.q) && !g.q[g.head].at.After(now) {
		due = append(due, g.q[g.head].forget)
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
	for _, f := range due {
		f()
	}
}
