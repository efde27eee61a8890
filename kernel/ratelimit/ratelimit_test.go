package ratelimit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestTiersAllows(t *testing.T) {
	tiers, err := NewTiers(DefaultPlans...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		plan, tier string
		want       bool
	}{
		{"free", "", true},
		{"", "", true},
		{"free", "free", true},
		{"free", "pro", false},
		{"free", "enterprise", false},
		{"pro", "free", true},
		{"pro", "pro", true},
		{"pro", "enterprise", false},
		{"enterprise", "free", true},
		{"enterprise", "enterprise", true},
		{"local", "free", false},      // unknown plan: fail closed
		{"", "free", false},           // no plan
		{"Pro", "pro", false},         // case-sensitive
		{"enterprise", "gold", false}, // unknown tier
	}
	for _, tt := range tests {
		if got := tiers.Allows(tt.plan, tt.tier); got != tt.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", tt.plan, tt.tier, got, tt.want)
		}
	}
	var zero *Tiers
	if !zero.Allows("free", "") || zero.Allows("free", "free") {
		t.Error("nil Tiers must allow only untiered tools")
	}
	if got := tiers.Plans(); strings.Join(got, ",") != "free,pro,enterprise" {
		t.Errorf("Plans = %v", got)
	}
}

func TestNewTiersRefuses(t *testing.T) {
	for _, plans := range [][]string{nil, {""}, {"free", "free"}, {"free", "pro plus"}, {strings.Repeat("p", 65)}, {"fr\nee"}} {
		if _, err := NewTiers(plans...); !errors.Is(err, ErrTiers) {
			t.Errorf("NewTiers(%q) = %v, want ErrTiers", plans, err)
		}
	}
}

func TestCheckTier(t *testing.T) {
	tiers, _ := NewTiers("free", "pro")
	if tiers.CheckTier("") != nil || tiers.CheckTier("pro") != nil {
		t.Error("known tiers refused")
	}
	if err := tiers.CheckTier("enterprise"); !errors.Is(err, ErrTiers) {
		t.Errorf("CheckTier(enterprise) = %v", err)
	}
	var zero *Tiers
	if err := zero.CheckTier("free"); !errors.Is(err, ErrTiers) {
		t.Errorf("nil CheckTier(free) = %v", err)
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestLimiterWindow(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	l, err := NewLimiter(&LimiterOptions{Limit: 3, Window: time.Minute, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	steps := []struct {
		advance   time.Duration
		who       string
		allowed   bool
		remaining int
		retry     time.Duration
	}{
		{0, "alice", true, 2, 0},
		{10 * time.Second, "alice", true, 1, 0},
		{10 * time.Second, "alice", true, 0, 0},
		{10 * time.Second, "alice", false, 0, 30 * time.Second},
		{0, "bob", true, 2, 0}, // per principal
		{29 * time.Second, "alice", false, 0, time.Second},
		{time.Second, "alice", true, 2, 0}, // window reset at start + 1m
		{0, "alice", true, 1, 0},
	}
	for i, s := range steps {
		clock.Add(s.advance)
		d, err := l.Allow(ctx, s.who)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		want := Decision{Allowed: s.allowed, Remaining: s.remaining, RetryAfter: s.retry, Limit: 3}
		if d != want {
			t.Fatalf("step %d (%s): got %+v, want %+v", i, s.who, d, want)
		}
	}
}

func TestLimiterDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := NewLimiter(nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := range DefaultLimit {
			if d, _ := l.Allow(ctx, "p"); !d.Allowed {
				t.Fatalf("call %d refused", i+1)
			}
		}
		d, err := l.Allow(ctx, "p")
		if err != nil || d.Allowed || d.RetryAfter != DefaultWindow {
			t.Fatalf("call 101: %+v, %v", d, err)
		}
		time.Sleep(DefaultWindow - time.Nanosecond)
		if d, _ := l.Allow(ctx, "p"); d.Allowed {
			t.Fatal("allowed before the window reset")
		}
		time.Sleep(time.Nanosecond)
		if d, _ := l.Allow(ctx, "p"); !d.Allowed || d.Remaining != DefaultLimit-1 {
			t.Fatalf("after reset: %+v", d)
		}
	})
}

func TestLimiterRefusesEmptyPrincipal(t *testing.T) {
	l, _ := NewLimiter(nil)
	d, err := l.Allow(context.Background(), "")
	if !errors.Is(err, ErrNoPrincipal) || d.Allowed {
		t.Fatalf("got %+v, %v", d, err)
	}
}

type brokenStore struct{}

func (brokenStore) Hit(context.Context, string, time.Time, time.Duration) (int, time.Time, error) {
	return 0, time.Time{}, errors.New("connection refused")
}

func TestLimiterFailsClosed(t *testing.T) {
	l, _ := NewLimiter(&LimiterOptions{Store: brokenStore{}})
	d, err := l.Allow(context.Background(), "alice")
	if err == nil || d.Allowed {
		t.Fatalf("store failure: got %+v, %v; want refusal with error", d, err)
	}
}

func TestNewLimiterRefusesNegative(t *testing.T) {
	for _, o := range []LimiterOptions{{Limit: -1}, {Window: -time.Second}} {
		if _, err := NewLimiter(&o); err == nil {
			t.Errorf("NewLimiter(%+v) accepted", o)
		}
	}
}

func TestMemoryStoreBounded(t *testing.T) {
	m := NewMemoryStore(3)
	ctx := context.Background()
	t0 := time.Unix(1000, 0)
	for i, k := range []string{"a", "b", "c"} {
		m.Hit(ctx, k, t0.Add(time.Duration(i)*time.Second), time.Minute)
	}
	m.Hit(ctx, "a", t0.Add(5*time.Second), time.Minute) // a: count 2
	m.Hit(ctx, "d", t0.Add(6*time.Second), time.Minute) // full: evicts a, opened first
	if m.Len() != 3 {
		t.Fatalf("Len = %d, want 3", m.Len())
	}
	if n, _, _ := m.Hit(ctx, "a", t0.Add(7*time.Second), time.Minute); n != 1 {
		t.Fatalf("a after eviction: count %d, want 1 (fresh window)", n)
	}
	if n, _, _ := m.Hit(ctx, "c", t0.Add(8*time.Second), time.Minute); n != 2 {
		t.Fatalf("c: count %d, want 2", n)
	}
	// Closed windows go first: at t0+2m every window has closed.
	m.Hit(ctx, "e", t0.Add(2*time.Minute), time.Minute)
	if m.Len() != 1 {
		t.Fatalf("Len after expiry = %d, want 1", m.Len())
	}
}

func TestMemoryStoreManyPrincipals(t *testing.T) {
	m := NewMemoryStore(1000)
	l, _ := NewLimiter(&LimiterOptions{Store: m})
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				if _, err := l.Allow(ctx, fmt.Sprintf("p%d-%d", g, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if m.Len() > 1000 {
		t.Fatalf("store grew to %d keys", m.Len())
	}
}

func TestRefusal(t *testing.T) {
	tests := []struct {
		retry time.Duration
		secs  int
	}{
		{42 * time.Second, 42},
		{41*time.Second + time.Millisecond, 42},
		{0, 1},
		{time.Millisecond, 1},
		{time.Minute, 60},
	}
	for _, tt := range tests {
		e := Refusal(Decision{RetryAfter: tt.retry, Limit: 100})
		if e.Code != -32000 {
			t.Errorf("code %d", e.Code)
		}
		if want := fmt.Sprintf("Resets in %ds.", tt.secs); !strings.HasSuffix(e.Message, want) {
			t.Errorf("message %q does not end %q", e.Message, want)
		}
		var data map[string]any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		if data["error"] != "rate_limited" || data["retryAfterSeconds"] != float64(tt.secs) || len(data) != 2 {
			t.Errorf("data %s", e.Data)
		}
		if h := RetryAfterHeader(Decision{RetryAfter: tt.retry}); h != fmt.Sprint(tt.secs) {
			t.Errorf("Retry-After %q, want %d", h, tt.secs)
		}
	}
	wire, _ := json.Marshal(Refusal(Decision{RetryAfter: 5 * time.Second, Limit: 100}))
	const want = `{"code":-32000,"message":"Rate limit exceeded: 100 calls per window. Resets in 5s.","data":{"error":"rate_limited","retryAfterSeconds":5}}`
	if string(wire) != want {
		t.Errorf("wire:\n%s\nwant\n%s", wire, want)
	}
}

func BenchmarkLimiterAllow(b *testing.B) {
	l, _ := NewLimiter(&LimiterOptions{Limit: 1 << 30})
	ctx := context.Background()
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = fmt.Sprintf("principal-%d", i)
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l.Allow(ctx, ids[i%len(ids)])
			i++
		}
	})
}
