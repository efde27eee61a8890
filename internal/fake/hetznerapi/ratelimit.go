package hetznerapi

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// rateState is the token bucket behind the RateLimit-* headers: Limit per
// hour, refilled at Limit/3600 per second (reference §2.6).
type rateState struct {
	remaining   float64
	last        time.Time
	forced      int
	forcedReset time.Time
}

// RateLimitNext makes the next n API requests answer 429
// rate_limit_exceeded with RateLimit-Remaining 0 and RateLimit-Reset at
// reset.
func (s *Server) RateLimitNext(n int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rate.forced, s.rate.forcedReset = n, reset
}

// SetRateLimitRemaining sets the bucket to n requests left.
func (s *Server) SetRateLimitRemaining(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rate.remaining = float64(min(n, s.opts.RateLimit))
	s.rate.last = s.opts.Now()
}

// rateLimit spends one request and sets the headers; 429 when empty or
// forced.
func (s *Server) rateLimit(w http.ResponseWriter) *apiError {
	now := s.opts.Now()
	limit := float64(s.opts.RateLimit)
	perSec := limit / 3600
	if !s.rate.last.IsZero() && now.After(s.rate.last) {
		s.rate.remaining = min(limit, s.rate.remaining+now.Sub(s.rate.last).Seconds()*perSec)
	}
	s.rate.last = now
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(s.opts.RateLimit))
	if s.rate.forced > 0 {
		s.rate.forced--
		h.Set("RateLimit-Remaining", "0")
		h.Set("RateLimit-Reset", strconv.FormatInt(s.rate.forcedReset.Unix(), 10))
		return newError(CodeRateLimitExceeded, "limit of requests per hour reached")
	}
	exceeded := s.rate.remaining < 1 && !s.opts.DisableRateLimit
	if !exceeded && !s.opts.DisableRateLimit {
		s.rate.remaining--
	}
	full := now.Add(time.Duration(math.Ceil((limit-s.rate.remaining)/perSec)) * time.Second)
	h.Set("RateLimit-Remaining", strconv.Itoa(int(math.Floor(s.rate.remaining))))
	h.Set("RateLimit-Reset", strconv.FormatInt(full.Unix(), 10))
	if exceeded {
		return newError(CodeRateLimitExceeded, "limit of requests per hour reached")
	}
	return nil
}
