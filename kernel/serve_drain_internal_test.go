package kernel

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestDrainWakesWaiters: a change wakes every goroutine waiting in until,
// however it races with their start (a change while nobody waits signals
// nothing, and costs nothing), and each returns once the owed count is low
// enough.
func TestDrainWakesWaiters(t *testing.T) {
	for round := range 200 {
		d := newDrain(context.Background())
		for i := range 4 {
			d.request(strconv.Itoa(i))
		}
		var wg sync.WaitGroup
		for n := range 4 {
			wg.Add(1)
			go func() { defer wg.Done(); d.until(n, time.Minute) }()
		}
		for i := range 4 {
			if round%2 == 0 {
				time.Sleep(time.Microsecond)
			}
			d.answered(strconv.Itoa(i))
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: a waiter was never woken", round)
		}
		if d.waiting != 0 {
			t.Fatalf("round %d: %d waiters counted after all returned", round, d.waiting)
		}
	}
	// Without waiters, a change makes no new channel.
	d := newDrain(context.Background())
	ch := d.changed
	d.request("x")
	d.answered("x")
	if d.changed != ch {
		t.Fatal("a change with nobody waiting replaced the channel")
	}
}
