package gateway

import (
	"sync"
	"time"
)

// graceQueue forgets finished calls notifyGrace after their end, as one
// time.AfterFunc per call did, with one timer per link. The ends are
// queued in order (every call gets the same grace). Each new end first
// forgets the ends whose grace is over, so a link that keeps calling needs
// no timer to forget; the timer forgets what is left once calls stop, and
// fires at most once every grace/sweepShare (TestGraceQueueTimerIsRare): a
// timer re-armed for the oldest end fired once per call, waking the
// gateway between calls. An end is a value (the call's token), not a
// closure: one allocation less per call.
type graceQueue struct {
	mu     sync.Mutex
	q      []graceEnd
	head   int
	timer  *time.Timer
	armed  bool
	grace  time.Duration  // of the last end queued
	sweeps int            // the timer's, for tests
	forget func(graceEnd) // set before the first after (link.forget)
}

// sweepShare: the timer waits at least grace/sweepShare between sweeps, so
// an end is forgotten at most that much later than its grace when no call
// follows it.
const sweepShare = 4

// graceEnd is a finished call: its token, and whether it counts in the
// link's calls in flight (a relayed call does; a relaying upstream's
// flight, relay.go, does not).
type graceEnd struct {
	at      time.Time
	key     tokKey
	counted bool
}

// after forgets e once grace has passed (not before; up to
// grace/sweepShare later when no call ends after it), and forgets now the
// ends queued before it whose grace is over.
func (g *graceQueue) after(grace time.Duration, e graceEnd) {
	var buf [4]graceEnd
	now := time.Now()
	g.mu.Lock()
	due := g.due(now, buf[:0])
	e.at = now.Add(grace)
	g.q = append(g.q, e)
	g.grace = grace
	if !g.armed {
		g.armed = true
		if g.timer == nil {
			g.timer = time.AfterFunc(grace, g.sweep)
		} else {
			g.timer.Reset(grace)
		}
	}
	g.mu.Unlock()
	for _, d := range due {
		g.forget(d)
	}
}

// due takes out of the queue the ends whose grace is over at now, appended
// to into; it keeps the queue's backing array bounded. g.mu is held.
func (g *graceQueue) due(now time.Time, into []graceEnd) []graceEnd {
	for g.head < len(g.q) && !g.q[g.head].at.After(now) {
		into = append(into, g.q[g.head])
		g.q[g.head] = graceEnd{}
		g.head++
	}
	switch {
	case g.head == len(g.q):
		g.q, g.head = g.q[:0], 0
	case g.head > len(g.q)/2:
		n := copy(g.q, g.q[g.head:])
		clear(g.q[n:])
		g.q, g.head = g.q[:n], 0
	}
	return into
}

// sweep is the timer's: it forgets the ends whose grace is over and
// re-arms for the oldest left, no sooner than grace/sweepShare.
func (g *graceQueue) sweep() {
	g.mu.Lock()
	now := time.Now()
	g.sweeps++
	due := g.due(now, nil)
	if len(g.q) == 0 {
		g.armed = false
	} else {
		g.timer.Reset(max(g.q[g.head].at.Sub(now), g.grace/sweepShare))
	}
	g.mu.Unlock()
	for _, e := range due {
		g.forget(e)
	}
}
