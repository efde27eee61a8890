package upstream

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy bounds the client's retries. The zero value gives the defaults;
// MaxAttempts 1 turns retries off.
//
// What is retried: a 429 for every method (a rate-limited request was not
// executed); 502, 503 and 504 only for safe methods (GET, HEAD, OPTIONS) or a
// Request marked Idempotent. Transport failures and timeouts are not retried:
// a request that timed out may have been applied, and a slow upstream stays
// slow.
//
// How long: a Retry-After header (seconds or HTTP date) is honoured as given.
// A 429 carrying only RateLimit-Reset waits until the reset: a retry before
// it would only be refused again and spend another request of the budget.
// Otherwise the wait is
// exponential backoff with full jitter: uniform in [0, min(MaxDelay,
// BaseDelay·2^(attempt-1))]. A retry whose wait would exceed what is left of
// MaxWait, or would end after the context's deadline, is not made; the last
// response is returned instead.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included. 0 means 4.
	MaxAttempts int
	// MaxWait caps the total time spent waiting between attempts. 0 means 30 s.
	MaxWait time.Duration
	// BaseDelay is the backoff ceiling of the first retry. 0 means 500 ms.
	BaseDelay time.Duration
	// MaxDelay caps one backoff ceiling. 0 means 10 s.
	MaxDelay time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = 4
	}
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	if p.MaxWait <= 0 {
		p.MaxWait = 30 * time.Second
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 10 * time.Second
	}
	return p
}

// ceiling is the backoff ceiling before retry number n (1-based).
func (p RetryPolicy) ceiling(n int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	return min(d, p.MaxDelay)
}

// retryable reports whether a response with this status may be retried.
func retryable(status int, req *Request) bool {
	switch status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return req.Idempotent || safeMethod(req.method())
	}
	return false
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// RetryAfter reports when the upstream said to try again: the Retry-After
// header (delta seconds or an HTTP date), else RateLimit-Reset (a Unix time in
// seconds, as the Hetzner API sends it; values below 10^9 are read as delta
// seconds, as in the IETF draft). Times in the past give 0; a wait of a day
// or more is reported as exactly a day.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if d, ok := retryAfterHeader(h, now); ok {
		return d, true
	}
	return rateLimitReset(h, now)
}

func retryAfterHeader(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		return secondsDuration(secs), secs >= 0
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

func rateLimitReset(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("RateLimit-Reset"))
	secs, err := strconv.ParseInt(v, 10, 64)
	if v == "" || err != nil || secs < 0 {
		return 0, false
	}
	if secs < 1e9 {
		return secondsDuration(secs), true
	}
	if delta := secs - now.Unix(); delta > day {
		// Saturate like a delta, before time.Unix overflows: a reset of
		// 9223372036854775807 is a day or more away, not in the past.
		return secondsDuration(delta), true
	}
	return max(time.Unix(secs, 0).Sub(now), 0), true
}

// day is a day in seconds: the most RetryAfter reports.
const day = 24 * 60 * 60

// secondsDuration converts without overflow; absurd values saturate at a day,
// which no retry budget accepts anyway.
func secondsDuration(secs int64) time.Duration {
	return time.Duration(min(max(secs, 0), day)) * time.Second
}

// nextWait decides whether to retry after attempt number attempt (1-based)
// and for how long to wait first.
func (c *Client) nextWait(ctx context.Context, req *Request, resp *Response, attempt int, waited time.Duration) (time.Duration, bool) {
	p := c.retry
	if attempt >= p.MaxAttempts || !retryable(resp.StatusCode, req) {
		return 0, false
	}
	now := c.now()
	d := c.jitter(p.ceiling(attempt))
	if ra, ok := retryAfterHeader(resp.Header, now); ok {
		d = ra
	} else if reset, ok := rateLimitReset(resp.Header, now); ok && resp.StatusCode == http.StatusTooManyRequests {
		d = reset
	}
	if waited+d > p.MaxWait {
		return 0, false
	}
	if dl, ok := ctx.Deadline(); ok && !now.Add(d).Before(dl) {
		return 0, false
	}
	return d, true
}

func defaultSleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// fullJitter returns a uniform duration in [0, ceiling].
func fullJitter(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}
