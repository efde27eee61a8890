package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// scripted answers the statuses in order (the last one repeats), each with
// the given headers.
type scripted struct {
	mu      sync.Mutex
	steps   []step
	methods []string
}

type step struct {
	status int
	header map[string]string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := min(len(s.methods), len(s.steps)-1)
	s.methods = append(s.methods, r.Method)
	st := s.steps[i]
	s.mu.Unlock()
	for k, v := range st.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(st.status)
	fmt.Fprintf(w, "attempt %d", i+1)
}

func statuses(codes ...int) []step {
	out := make([]step, len(codes))
	for i, c := range codes {
		out[i] = step{status: c}
	}
	return out
}

func TestClientRetries(t *testing.T) {
	now := time.Unix(1_760_000_000, 0)
	reset := func(secs int) map[string]string {
		return map[string]string{"RateLimit-Reset": fmt.Sprint(now.Unix() + int64(secs))}
	}
	const base = 100 * time.Millisecond
	tests := []struct {
		name       string
		method     string
		idempotent bool
		steps      []step
		policy     RetryPolicy
		wantStatus int
		wantWaits  []time.Duration
	}{
		{"GET 503 503 200", "GET", false, statuses(503, 503, 200), RetryPolicy{}, 200, []time.Duration{base, 2 * base}},
		{"GET 502 then 200", "GET", false, statuses(502, 200), RetryPolicy{}, 200, []time.Duration{base}},
		{"GET 504 then 200", "GET", false, statuses(504, 200), RetryPolicy{}, 200, []time.Duration{base}},
		{"HEAD 503 then 200", "HEAD", false, statuses(503, 200), RetryPolicy{}, 200, []time.Duration{base}},
		{"GET stops at MaxAttempts", "GET", false, statuses(503), RetryPolicy{}, 503, []time.Duration{base, 2 * base, 4 * base}},
		{"GET MaxAttempts 1", "GET", false, statuses(503, 200), RetryPolicy{MaxAttempts: 1}, 503, nil},
		{"GET 500 not retried", "GET", false, statuses(500, 200), RetryPolicy{}, 500, nil},
		{"GET 404 not retried", "GET", false, statuses(404, 200), RetryPolicy{}, 404, nil},
		{"POST 503 not retried", "POST", false, statuses(503, 200), RetryPolicy{}, 503, nil},
		{"POST 502 not retried", "POST", false, statuses(502, 200), RetryPolicy{}, 502, nil},
		{"PUT 504 not retried", "PUT", false, statuses(504, 200), RetryPolicy{}, 504, nil},
		{"DELETE 503 not retried", "DELETE", false, statuses(503, 200), RetryPolicy{}, 503, nil},
		{"POST declared idempotent 503", "POST", true, statuses(503, 200), RetryPolicy{}, 200, []time.Duration{base}},
		{"POST 429 retried", "POST", false, statuses(429, 201), RetryPolicy{}, 201, []time.Duration{base}},
		{"DELETE 429 retried", "DELETE", false, statuses(429, 201), RetryPolicy{}, 201, []time.Duration{base}},
		{"429 Retry-After honoured", "POST", false,
			[]step{{429, map[string]string{"Retry-After": "3"}}, {201, nil}}, RetryPolicy{}, 201, []time.Duration{3 * time.Second}},
		{"429 reset already passed", "GET", false,
			[]step{{429, reset(0)}, {200, nil}}, RetryPolicy{}, 200, []time.Duration{0}},
		{"429 waits until the reset, not the shorter backoff", "GET", false,
			[]step{{429, reset(5)}, {200, nil}}, RetryPolicy{}, 200, []time.Duration{5 * time.Second}},
		{"429 reset as delta seconds", "POST", false,
			[]step{{429, map[string]string{"RateLimit-Reset": "7"}}, {201, nil}}, RetryPolicy{}, 201, []time.Duration{7 * time.Second}},
		{"429 reset beyond MaxWait: not retried", "GET", false,
			[]step{{429, reset(3600)}, {200, nil}}, RetryPolicy{}, 429, nil},
		{"429 resets add up within MaxWait", "GET", false,
			[]step{{429, reset(20)}, {429, reset(20)}, {200, nil}}, RetryPolicy{}, 429, []time.Duration{20 * time.Second}},
		{"429 Retry-After beyond MaxWait", "GET", false,
			[]step{{429, map[string]string{"Retry-After": "31"}}, {200, nil}}, RetryPolicy{}, 429, nil},
		{"MaxWait budget spent", "GET", false, statuses(503),
			RetryPolicy{MaxAttempts: 10, MaxWait: 350 * time.Millisecond}, 503, []time.Duration{base, 2 * base}},
		{"503 with Retry-After", "GET", false,
			[]step{{503, map[string]string{"Retry-After": "2"}}, {200, nil}}, RetryPolicy{}, 200, []time.Duration{2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &scripted{steps: tt.steps}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			var waits []time.Duration
			pol := tt.policy
			pol.BaseDelay = base
			c := New(&Options{
				Retry:  pol,
				Now:    func() time.Time { return now },
				Jitter: func(c time.Duration) time.Duration { return c },
				Sleep: func(_ context.Context, d time.Duration) error {
					waits = append(waits, d)
					return nil
				},
			})
			req := authReq(t, tt.method, ts.URL)
			req.Idempotent = tt.idempotent
			resp, err := c.Do(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if !slices.Equal(waits, tt.wantWaits) {
				t.Errorf("waits %v, want %v", waits, tt.wantWaits)
			}
			if resp.Attempts != len(tt.wantWaits)+1 || len(srv.methods) != resp.Attempts {
				t.Errorf("attempts %d, server saw %d, want %d", resp.Attempts, len(srv.methods), len(tt.wantWaits)+1)
			}
		})
	}
}

func TestClientRetryRespectsContext(t *testing.T) {
	ts := httptest.NewServer(&scripted{steps: []step{{429, map[string]string{"Retry-After": "5"}}, {200, nil}}})
	defer ts.Close()
	slept := false
	c := New(&Options{Sleep: func(context.Context, time.Duration) error { slept = true; return nil }})

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, authReq(t, "GET", ts.URL))
	if err != nil || resp.StatusCode != 429 || slept {
		t.Fatalf("deadline before the retry: status %v err %v slept %v; want the 429 without waiting", resp, err, slept)
	}

	ts2 := httptest.NewServer(&scripted{steps: []step{{429, nil}, {200, nil}}})
	defer ts2.Close()
	ctx, cancel = context.WithCancel(t.Context())
	c = New(&Options{Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }})
	_, err = c.Do(ctx, authReq(t, "GET", ts2.URL))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel while waiting: err = %v, want context.Canceled", err)
	}
}

func TestDefaultSleep(t *testing.T) {
	if err := defaultSleep(t.Context(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := defaultSleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if err := defaultSleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
