package kernel

import (
	"runtime"
	"testing"
	"time"
)

// TestWorkersReused: calls run one after another reuse a worker instead of
// starting a goroutine each, and closing the pool ends the idle ones.
func TestWorkersReused(t *testing.T) {
	base := runtime.NumGoroutine()
	w := newWorkers()
	done := make(chan struct{})
	for range 200 {
		w.run(func() { done <- struct{}{} })
		<-done
	}
	// A worker may be between its job and its wait when the next job is
	// sent, so a second one may start; never one per job.
	if n := runtime.NumGoroutine() - base; n > 2 {
		t.Fatalf("%d goroutines for 200 sequential jobs, want at most 2", n)
	}
	w.close()
	w.close() // a second close (the session's end after a hand-off) is harmless
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left after close", runtime.NumGoroutine()-base)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
