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
	var early []int
	var wg sync.WaitGroup
	run := func(n int) {
		for i := range n {
			wg.Add(1)
			end := time.Now()
			q.after(grace, func() {
				defer wg.Done()
				if time.Since(end) < grace {
					mu.Lock()
					early = append(early, i)
					mu.Unlock()
				}
			})
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
