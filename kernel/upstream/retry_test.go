package upstream

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Unix(1_760_000_000, 0)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"retry-after seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"retry-after date", map[string]string{"Retry-After": now.Add(90 * time.Second).UTC().Format(http.TimeFormat)}, 90 * time.Second, true},
		{"retry-after past date", map[string]string{"Retry-After": now.Add(-time.Hour).UTC().Format(http.TimeFormat)}, 0, true},
		{"retry-after junk", map[string]string{"Retry-After": "soon"}, 0, false},
		{"retry-after negative", map[string]string{"Retry-After": "-5"}, 0, false},
		{"retry-after huge saturates", map[string]string{"Retry-After": "99999999999999"}, 24 * time.Hour, true},
		{"reset unix", map[string]string{"RateLimit-Reset": "1760000012"}, 12 * time.Second, true},
		{"reset unix past", map[string]string{"RateLimit-Reset": "1759999000"}, 0, true},
		{"reset delta", map[string]string{"RateLimit-Reset": "3"}, 3 * time.Second, true},
		{"reset junk", map[string]string{"RateLimit-Reset": "x"}, 0, false},
		{"reset unix far away saturates", map[string]string{"RateLimit-Reset": "1790000000"}, 24 * time.Hour, true},
		{"reset unix max saturates", map[string]string{"RateLimit-Reset": "9223372036854775807"}, 24 * time.Hour, true},
		{"retry-after wins", map[string]string{"Retry-After": "2", "RateLimit-Reset": "1760000012"}, 2 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := RetryAfter(h, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("RetryAfter = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRetryPolicyCeiling(t *testing.T) {
	p := RetryPolicy{BaseDelay: time.Second, MaxDelay: 5 * time.Second}.withDefaults()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := p.ceiling(i + 1); got != w {
			t.Errorf("ceiling(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := (RetryPolicy{MaxAttempts: -3}).withDefaults().MaxAttempts; got != 1 {
		t.Errorf("negative MaxAttempts became %d, want 1", got)
	}
	if got := (RetryPolicy{}).withDefaults(); got.MaxAttempts != 4 || got.MaxWait != 30*time.Second {
		t.Errorf("defaults = %+v", got)
	}
}

func TestFullJitterBounds(t *testing.T) {
	for range 1000 {
		if d := fullJitter(10 * time.Millisecond); d < 0 || d > 10*time.Millisecond {
			t.Fatalf("fullJitter out of range: %v", d)
		}
	}
	if fullJitter(0) != 0 {
		t.Error("fullJitter(0) != 0")
	}
}
