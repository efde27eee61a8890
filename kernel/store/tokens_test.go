package store_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/confirm"
)

func pending(token, principal, bound string, expires time.Time) confirm.Pending {
	return confirm.Pending{TokenHash: sha256.Sum256([]byte(token)), Principal: principal,
		Digest: sha256.Sum256([]byte(bound)), Expires: expires}
}

func redeem(t *testing.T, s confirm.Store, token, principal, bound string, now time.Time) bool {
	t.Helper()
	ok, err := s.Redeem(context.Background(), principal, sha256.Sum256([]byte(token)), sha256.Sum256([]byte(bound)), now)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func put(t *testing.T, s confirm.Store, p confirm.Pending, max int) {
	t.Helper()
	if err := s.Put(context.Background(), p, max); err != nil {
		t.Fatal(err)
	}
}

func TestTokenRedeemOnce(t *testing.T) {
	s, _, _ := newStore(t)
	now := time.Now()
	put(t, s, pending("tok", "alice", "delete www", now.Add(time.Minute)), 8)
	if !redeem(t, s, "tok", "alice", "delete www", now) {
		t.Fatal("a matching token was refused")
	}
	if redeem(t, s, "tok", "alice", "delete www", now) {
		t.Fatal("a spent token was redeemed again")
	}
}

func TestTokenMismatchDoesNotSpend(t *testing.T) {
	s, _, _ := newStore(t)
	now := time.Now()
	put(t, s, pending("tok", "alice", "delete www", now.Add(time.Minute)), 8)
	for _, tc := range []struct{ name, token, principal, bound string }{
		{"other payload", "tok", "alice", "delete mail"},
		{"other principal", "tok", "mallory", "delete www"},
		{"other token", "tik", "alice", "delete www"},
	} {
		if redeem(t, s, tc.token, tc.principal, tc.bound, now) {
			t.Fatalf("%s: redeemed", tc.name)
		}
	}
	if !redeem(t, s, "tok", "alice", "delete www", now) {
		t.Fatal("a refused attempt spent the pending token")
	}
}

func TestTokenExpiry(t *testing.T) {
	s, tg, c := newStore(t)
	now := time.Now()
	exp := now.Add(time.Minute)
	put(t, s, pending("tok", "alice", "b", exp), 8)
	keys, err := tg.Keys(context.Background(), c, "confirm:")
	if err != nil || len(keys) != 1 {
		t.Fatalf("token keys %v, %v", keys, err)
	}
	if strings.Contains(keys[0], "alice") || strings.Contains(keys[0], "tok") {
		t.Fatalf("key %q names the principal or the token", keys[0])
	}
	at, err := c.PExpireTime(context.Background(), keys[0]).Result()
	// The in-process Redis keeps a TTL relative to its own clock and
	// reports the absolute time from it, so allow a second's drift.
	if d := at.Milliseconds() - exp.UnixMilli(); err != nil || d < -1000 || d > 1000 {
		t.Fatalf("token key expires at %v (%v), want %d ms", at.Milliseconds(), err, exp.UnixMilli())
	}
	if redeem(t, s, "tok", "alice", "b", exp) {
		t.Fatal("redeemed at its expiry")
	}
	// Redis itself drops a token whose expiry passed.
	put(t, s, pending("short", "alice", "b", time.Now().Add(50*time.Millisecond)), 8)
	tg.Sleep(80 * time.Millisecond)
	if redeem(t, s, "short", "alice", "b", now) {
		t.Fatal("redeemed after Redis expired it")
	}
}

func TestTokenCapEvictsOldest(t *testing.T) {
	s, tg, c := newStore(t)
	now := time.Now()
	for i, tok := range []string{"t1", "t2", "t3", "t4"} {
		put(t, s, pending(tok, "alice", "b", now.Add(time.Minute)), 3)
		if i == 0 {
			put(t, s, pending("b1", "bob", "b", now.Add(time.Minute)), 3)
		}
	}
	if redeem(t, s, "t1", "alice", "b", now) {
		t.Fatal("the oldest token outlived the cap")
	}
	for _, tok := range []string{"t2", "t3", "t4"} {
		if !redeem(t, s, tok, "alice", "b", now) {
			t.Fatalf("%s was evicted", tok)
		}
	}
	if !redeem(t, s, "b1", "bob", "b", now) {
		t.Fatal("another principal's token was evicted")
	}
	keys, _ := tg.Keys(context.Background(), c, "")
	if len(keys) != 0 {
		t.Fatalf("keys left after every token was spent: %v", keys)
	}
}

func TestTokenConcurrentRedeem(t *testing.T) {
	s, _, _ := newStore(t)
	now := time.Now()
	put(t, s, pending("tok", "alice", "b", now.Add(time.Minute)), 8)
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 20 {
		wg.Go(func() {
			<-start
			ok, err := s.Redeem(context.Background(), "alice", sha256.Sum256([]byte("tok")), sha256.Sum256([]byte("b")), now)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d redeems won, want exactly 1", wins.Load())
	}
}

func TestTokensFailClosed(t *testing.T) {
	s := unreachable(t)
	ctx := context.Background()
	if err := s.Put(ctx, pending("tok", "alice", "b", time.Now().Add(time.Minute)), 8); err == nil {
		t.Fatal("Put without Redis succeeded")
	}
	ok, err := s.Redeem(ctx, "alice", sha256.Sum256([]byte("tok")), sha256.Sum256([]byte("b")), time.Now())
	if err == nil || ok {
		t.Fatalf("Redeem without Redis = %v, %v", ok, err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Fatal("Ping without Redis succeeded")
	}
}
