package gateway

import (
	"sync"
	"testing"
	"time"
)

// TestGraceQueueForgetsAfterGrace: every call is forgotten, none before its
// grace is over, with calls ending while the timer waits and after it has
// stopped; the queue ends empty and disarmed.
func TestGraceQueueForgetsAfterGrace(t *testing.T) {
	var q graceQueue
	const grace = 30 * time.Millisecond
	var mu sync.Mutex
	var early []uint64
	ends := map[uint64]time.Time{}
	var wg sync.WaitGroup
	q.forget = func(e graceEnd) {
		defer wg.Done()
		mu.Lock()
		defer mu.Unlock()
		if time.Since(ends[e.key.n]) < grace {
			early = append(early, e.key.n)
		}
	}
	var next uint64
	run := func(n int) {
		for range n {
			wg.Add(1)
			next++
			mu.Lock()
			ends[next] = time.Now()
			mu.Unlock()
			q.after(grace, graceEnd{key: tokKey{n: next}})
			time.Sleep(time.Millisecond)
		}
	}
	run(50)
	wg.Wait()
	run(5) // the timer re-armed after it stopped
	wg.Wait()
	if len(early) > 0 {
		t.Fatalf("forgotten before the grace: %v", early)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.armed || len(q.q) != 0 {
		t.Fatalf("queue left armed=%v len=%d", q.armed, len(q.q))
	}
}
