package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

func hit(t *testing.T, s ratelimit.Store, key string, now time.Time, window time.Duration) (int, time.Time) {
	t.Helper()
	n, reset, err := s.Hit(context.Background(), key, now, window)
	if err != nil {
		t.Fatal(err)
	}
	return n, reset
}

func TestHitCountsInAWindow(t *testing.T) {
	s, tg, c := newStore(t)
	now := time.Now().Truncate(time.Millisecond)
	for i := 1; i <= 3; i++ {
		n, reset := hit(t, s, "alice", now.Add(time.Duration(i)*time.Second), time.Minute)
		if n != i || !reset.Equal(now.Add(time.Second+time.Minute)) {
			t.Fatalf("hit %d: count %d, reset %v", i, n, reset.Sub(now))
		}
	}
	if n, _ := hit(t, s, "bob", now, time.Minute); n != 1 {
		t.Fatalf("another key shares the count: %d", n)
	}
	keys, _ := tg.Keys(context.Background(), c, "rate:")
	for _, k := range keys {
		ttl, err := c.PTTL(context.Background(), k).Result()
		if err != nil || ttl <= 0 || ttl > time.Minute {
			t.Fatalf("window key %s has TTL %v (%v)", k, ttl, err)
		}
	}
}

func TestHitWindowResets(t *testing.T) {
	s, tg, _ := newStore(t)
	now := time.Now().Truncate(time.Millisecond)
	hit(t, s, "alice", now, time.Minute)
	hit(t, s, "alice", now.Add(59*time.Second), time.Minute)
	n, reset := hit(t, s, "alice", now.Add(time.Minute), time.Minute)
	if n != 1 || !reset.Equal(now.Add(2*time.Minute)) {
		t.Fatalf("at the window's end: count %d, reset %v", n, reset.Sub(now))
	}
	// Redis collects a window's key once its length has passed.
	hit(t, s, "bob", time.Now(), 100*time.Millisecond)
	tg.Sleep(150 * time.Millisecond)
	if n, _ := hit(t, s, "bob", now, 100*time.Millisecond); n != 1 {
		t.Fatalf("count %d after the key expired", n)
	}
}

func TestLimiterOverRedis(t *testing.T) {
	s, _, _ := newStore(t)
	now := time.Now()
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: 2, Store: s, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false} {
		d, err := lim.Allow(context.Background(), "alice")
		if err != nil || d.Allowed != want {
			t.Fatalf("call %d: %+v, %v", i, d, err)
		}
	}
}

func TestLimitsFailClosed(t *testing.T) {
	s := unreachable(t)
	if _, _, err := s.Hit(context.Background(), "alice", time.Now(), time.Minute); err == nil {
		t.Fatal("Hit without Redis succeeded")
	}
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: 5, Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := lim.Allow(context.Background(), "alice"); err == nil || d.Allowed {
		t.Fatalf("Allow without Redis = %+v, %v", d, err)
	}
}

// TestKeysAreSlotSafe: every key carries a Redis Cluster hash tag, the same
// for all of one principal's keys, so each script touches one slot.
func TestKeysAreSlotSafe(t *testing.T) {
	s, tg, c := newStore(t)
	now := time.Now()
	put(t, s, pending("tok", "alice", "b", now.Add(time.Minute)), 8)
	hit(t, s, "alice", now, time.Minute)
	keys, err := tg.Keys(context.Background(), c, "")
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	var tags []string
	for _, k := range keys {
		_, rest, ok := strings.Cut(k, "{")
		tag, _, closed := strings.Cut(rest, "}")
		if !ok || !closed || tag == "" {
			t.Fatalf("key %q has no hash tag", k)
		}
		tags = append(tags, tag)
	}
	if tags[0] != tags[1] || tags[1] != tags[2] {
		t.Fatalf("one principal's keys hash to different slots: %v", keys)
	}
}
