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

// TestGraceQueueTimerIsRare: while calls keep ending, each forgets the
// ends before it whose grace is over, and the timer fires at most once
// every grace/sweepShare, not once per call as a timer re-armed for the
// oldest end did (it woke the gateway between every two calls); every end
// is still forgotten, none early.
func TestGraceQueueTimerIsRare(t *testing.T) {
	var q graceQueue
	const grace = 20 * time.Millisecond
	var mu sync.Mutex
	var early, forgotten int
	ends := map[uint64]time.Time{}
	q.forget = func(e graceEnd) {
		mu.Lock()
		defer mu.Unlock()
		forgotten++
		if time.Since(ends[e.key.n]) < grace {
			early++
		}
	}
	const calls = 100
	start := time.Now()
	for n := uint64(1); n <= calls; n++ {
		mu.Lock()
		ends[n] = time.Now()
		mu.Unlock()
		q.after(grace, graceEnd{key: tokKey{n: n}})
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	q.mu.Lock()
	sweeps := q.sweeps
	q.mu.Unlock()
	if most := int(elapsed/(grace/sweepShare)) + 1; sweeps > most {
		t.Errorf("the timer fired %d times in %v of calls, more than once every %v (%d)", sweeps, elapsed, grace/sweepShare, most)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		f := forgotten
		mu.Unlock()
		if f == calls || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if forgotten != calls || early != 0 {
		t.Fatalf("forgotten %d of %d, %d before their grace", forgotten, calls, early)
	}
}
