package vdbapi

import (
	"net/http"
	"strconv"
	"time"
)

// spendLocked spends one request of o's daily quota and sets the
// rate-limit headers of reference §4 on h; s.mu held. It reports whether
// the quota is exhausted, with the seconds until it resets.
func (s *Server) spendLocked(h http.Header, o *org) (limited bool, retry int) {
	now := s.now().UTC()
	day := now.Format(time.DateOnly)
	if o.day != day {
		o.day, o.remaining = day, o.limit
	}
	reset := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	h.Set("X-VDB-Plan", o.plan)
	h.Set("RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if s.opts.SoftLimits {
		h.Set("X-Softlimits", "true")
	}
	if o.limit < 0 {
		h.Set("RateLimit-DayLimit", "unlimited")
		h.Set("RateLimit-Remaining", "unlimited")
		return false, 0
	}
	h.Set("RateLimit-DayLimit", strconv.Itoa(o.limit))
	if o.remaining <= 0 && !s.opts.SoftLimits {
		h.Set("RateLimit-Remaining", "0")
		return true, max(1, int(reset.Sub(now).Seconds()))
	}
	o.remaining = max(0, o.remaining-1)
	h.Set("RateLimit-Remaining", strconv.Itoa(o.remaining))
	return false, 0
}
