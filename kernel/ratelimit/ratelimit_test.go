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
		if _, err := NewTiers(plans...); !errors.Is(err, errTiers) {
			t.Errorf("NewTiers(%q) = %v, want errTiers", plans, err)
		}
	}
}

func TestCheckTier(t *testing.T) {
	tiers, _ := NewTiers("free", "pro")
	if tiers.CheckTier("") != nil || tiers.CheckTier("pro") != nil {
		t.Error("known tiers refused")
	}
	if err := tiers.CheckTier("enterprise"); !errors.Is(err, errTiers) {
		t.Errorf("CheckTier(enterprise) = %v", err)
	}
	var zero *Tiers
	if err := zero.CheckTier("free"); !errors.Is(err, errTiers) {
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
		want := Decision{Allowed: s.allowed, Remaining: s.remaining, RetryAfter: s.retry, Limit: 3, Window: time.Minute, Scope: ScopePrincipal}
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
	if !errors.Is(err, errNoPrincipal) || d.Allowed {
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

// TestRefusal pins the one shape of a rate-limit refusal, for both scopes:
// the flood guard (per address) and the per-principal limit.
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
	for _, scope := range []Scope{ScopeAddress, ScopePrincipal} {
		for _, tt := range tests {
			d := Decision{RetryAfter: tt.retry, Limit: 100, Window: time.Minute, Scope: scope, Setting: "--some-limit"}
			e := Refusal(d)
			if e.Code != RefusalCode {
				t.Errorf("code %d", e.Code)
			}
			if want := fmt.Sprintf("Resets in %ds.", tt.secs); !strings.HasSuffix(e.Message, want) || !strings.Contains(e.Message, "--some-limit") {
				t.Errorf("message %q does not name the setting or end %q", e.Message, want)
			}
			var data RefusalData
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatal(err)
			}
			want := RefusalData{Error: "rate_limited", Scope: scope, Limit: 100, WindowSeconds: 60, RetryAfterSeconds: tt.secs, Setting: "--some-limit"}
			if data != want {
				t.Errorf("data %s", e.Data)
			}
			if h := RetryAfterHeader(d); h != fmt.Sprint(tt.secs) {
				t.Errorf("Retry-After %q, want %d", h, tt.secs)
			}
		}
	}
	for _, tc := range []struct {
		d    Decision
		wire string
	}{
		{Decision{RetryAfter: 5 * time.Second, Limit: 100, Window: time.Minute, Scope: ScopePrincipal, Setting: "--rate-limit"},
			`{"code":-32000,"message":"Rate limit exceeded: 100 tool calls per minute for this principal (the operator's --rate-limit). Resets in 5s.","data":{"error":"rate_limited","scope":"principal","limit":100,"windowSeconds":60,"retryAfterSeconds":5,"setting":"--rate-limit"}}`},
		{Decision{RetryAfter: 9 * time.Second, Limit: 600, Window: 10 * time.Second, Scope: ScopeAddress, Setting: "--flood-limit"},
			`{"code":-32000,"message":"Rate limit exceeded: 600 requests per 10 seconds from this address (the operator's --flood-limit). Resets in 9s.","data":{"error":"rate_limited","scope":"address","limit":600,"windowSeconds":10,"retryAfterSeconds":9,"setting":"--flood-limit"}}`},
		{Decision{RetryAfter: time.Second, Limit: 3, Window: 2 * time.Minute, Scope: ScopePrincipal},
			`{"code":-32000,"message":"Rate limit exceeded: 3 tool calls per 2 minutes for this principal. Resets in 1s.","data":{"error":"rate_limited","scope":"principal","limit":3,"windowSeconds":120,"retryAfterSeconds":1}}`},
	} {
		if wire, _ := json.Marshal(Refusal(tc.d)); string(wire) != tc.wire {
			t.Errorf("wire:\n%s\nwant\n%s", wire, tc.wire)
		}
	}
}

func TestUnavailable(t *testing.T) {
	e := Unavailable("--store-outage")
	var data RefusalData
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatal(err)
	}
	if e.Code != UnavailableCode || data.Error != ReasonStoreUnavailable || data.Setting != "--store-outage" || data.Hint == "" ||
		data.RetryAfterSeconds != 0 || !strings.Contains(e.Message, "unreachable") || !strings.Contains(e.Message, "--store-outage") ||
		strings.Contains(e.Message, "Rate limit") {
		t.Fatalf("Unavailable = %+v %s", e, e.Data)
	}
	if e := Unavailable(""); strings.Contains(e.Message, "with .") {
		t.Fatalf("no setting: %q", e.Message)
	}
}

// TestAllowLocalDuringOutage: a store failure wraps ErrStoreUnavailable, and
// AllowLocal keeps counting in memory, apart from the store.
func TestAllowLocalDuringOutage(t *testing.T) {
	l, _ := NewLimiter(&LimiterOptions{Limit: 2, Store: brokenStore{}})
	ctx := context.Background()
	if _, err := l.Allow(ctx, "alice"); !errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("Allow over a broken store: %v", err)
	}
	for i, want := range []bool{true, true, false} {
		d, err := l.AllowLocal(ctx, "alice")
		if err != nil || d.Allowed != want {
			t.Fatalf("AllowLocal %d: %+v, %v", i, d, err)
		}
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
