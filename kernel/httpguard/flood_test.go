package httpguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestFloodKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::"},
		{"fe80::1%eth0", "fe80::"},
	}
	for _, tt := range tests {
		if got := floodKey(netip.MustParseAddr(tt.in), 64); got.String() != tt.want {
			t.Errorf("FloodKey(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := floodKey(netip.Addr{}, 64); got.IsValid() {
		t.Errorf("FloodKey(invalid) = %s", got)
	}
}

func TestFloodAllow(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	a := netip.MustParseAddr("192.0.2.1")
	b := netip.MustParseAddr("192.0.2.2")
	v6a := netip.MustParseAddr("2001:db8::1")
	v6b := netip.MustParseAddr("2001:db8::ffff") // same /64
	v6c := netip.MustParseAddr("2001:db8:0:1::1")
	f, err := newFlood(&FloodOptions{Limit: 2, Window: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		addr  netip.Addr
		at    time.Duration
		ok    bool
		retry time.Duration
	}{
		{"a 1", a, 0, true, 0},
		{"a 2", a, time.Second, true, 0},
		{"a 3 refused", a, 2 * time.Second, false, 8 * time.Second},
		{"b unaffected", b, 2 * time.Second, true, 0},
		{"a still refused", a, 9 * time.Second, false, time.Second},
		{"a window reset", a, 10 * time.Second, true, 0},
		{"a 2 in new window", a, 11 * time.Second, true, 0},
		{"a refused again", a, 12 * time.Second, false, 8 * time.Second},
		{"v6 1", v6a, 0, true, 0},
		{"v6 same /64", v6b, time.Second, true, 0},
		{"v6 same /64 refused", v6a, 2 * time.Second, false, 8 * time.Second},
		{"v6 other /64", v6c, 2 * time.Second, true, 0},
	}
	for _, s := range steps {
		ok, retry := f.Allow(s.addr, t0.Add(s.at))
		if ok != s.ok || retry != s.retry {
			t.Fatalf("%s: Allow = %v, %v; want %v, %v", s.name, ok, retry, s.ok, s.retry)
		}
	}
}

func TestFloodEvictsOldest(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	f, _ := newFlood(&FloodOptions{Limit: 1, Window: time.Minute, MaxAddresses: 3})
	addr := func(i byte) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, i}) }
	for i := byte(1); i <= 3; i++ {
		f.Allow(addr(i), t0.Add(time.Duration(i)*time.Second))
	}
	if ok, _ := f.Allow(addr(1), t0.Add(5*time.Second)); ok {
		t.Fatal("address 1 not limited while tracked")
	}
	f.Allow(addr(4), t0.Add(6*time.Second)) // full: evicts the oldest window (address 1)
	if n := f.Len(); n != 3 {
		t.Fatalf("Len = %d, want 3", n)
	}
	if ok, _ := f.Allow(addr(1), t0.Add(7*time.Second)); !ok {
		t.Fatal("address 1 still tracked after eviction")
	}
	if ok, _ := f.Allow(addr(4), t0.Add(7*time.Second)); ok {
		t.Fatal("address 4 lost its count")
	}
	// Expired windows are purged first, whatever their number.
	for i := byte(10); i < 200; i++ {
		f.Allow(addr(i), t0.Add(time.Hour+time.Duration(i)*time.Millisecond))
	}
	if n := f.Len(); n > 3 {
		t.Fatalf("Len = %d, over the cap", n)
	}
}

func TestNewFloodRejectsBadOptions(t *testing.T) {
	for _, o := range []FloodOptions{{Limit: -1}, {Window: -1}, {MaxAddresses: -1}, {IPv6PrefixLen: 129}} {
		if _, err := newFlood(&o); !errors.Is(err, errInvalidConfig) {
			t.Errorf("NewFlood(%+v) = %v", o, err)
		}
	}
}

func TestFloodZeroValueDefaults(t *testing.T) {
	var f floodGuard
	r := httptest.NewRequest("POST", "/", nil)
	r.RemoteAddr = "198.51.100.1:5555"
	for i := 0; i < DefaultFloodLimit; i++ {
		if err := f.Check(r); err != nil {
			t.Fatalf("request %d refused: %v", i+1, err)
		}
	}
	var rl *rateLimitError
	if err := f.Check(r); !errors.As(err, &rl) || !errors.Is(err, errRateLimited) || rl.RetryAfter <= 0 || rl.RetryAfter > defaultFloodWindow {
		t.Fatalf("request %d: %v", DefaultFloodLimit+1, err)
	}
}

func TestRemoteAddr(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"192.0.2.1:80", "192.0.2.1", true},
		{"[2001:db8::1]:80", "2001:db8::1", true},
		{"192.0.2.1", "192.0.2.1", true},
		{"@", "invalid IP", false},
		{"", "invalid IP", false},
	} {
		a, ok := remoteAddr(&http.Request{RemoteAddr: tt.in})
		if ok != tt.ok || a.String() != tt.want {
			t.Errorf("RemoteAddr(%q) = %v %v", tt.in, a, ok)
		}
	}
}

func TestFloodHandler(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	f, _ := newFlood(&FloodOptions{Limit: 2, Window: 10 * time.Second, Now: func() time.Time { return now }, Setting: "--flood-limit"})
	srv := serve(t, f.Handler(okHandler))
	steps := []struct {
		at     time.Duration
		status int
		retry  string
	}{
		{0, 200, ""},
		{time.Second, 200, ""},
		{1500 * time.Millisecond, 429, "9"}, // 8.5 s left, rounded up
		{9 * time.Second, 429, "1"},
		{10 * time.Second, 200, ""},
	}
	for i, s := range steps {
		now = time.Unix(1_000_000, 0).Add(s.at)
		got := send(t, srv, wireReq{body: "{}"})
		if s.status == 200 {
			wantOK(t, got)
			continue
		}
		wantRefusal(t, got, 429, codeRateLimited, reasonRateLimited)
		if got.header.Get("Retry-After") != s.retry || !strings.HasSuffix(got.rpc.Error.Message, "Resets in "+s.retry+"s.") || got.rpc.ID != nil {
			t.Fatalf("step %d: Retry-After %q body %s", i, got.header.Get("Retry-After"), got.body)
		}
		// One shape for every rate-limit refusal: ratelimit.Refusal's.
		want := `"data":{"error":"rate_limited","scope":"address","limit":2,"windowSeconds":10,"retryAfterSeconds":` + s.retry + `,"setting":"--flood-limit"}`
		if !strings.Contains(got.body, want) || !strings.Contains(got.rpc.Error.Message, "2 requests per 10 seconds from this address (the operator's --flood-limit)") {
			t.Fatalf("step %d: body %s, want %s", i, got.body, want)
		}
	}
}
