package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults of the per-principal limit, as in the HuGR kernel.
const (
	DefaultLimit         = 100
	DefaultWindow        = time.Minute
	DefaultMaxPrincipals = 100_000
)

// errNoPrincipal means Allow was called without a principal ID. Limits are
// per principal; an anonymous call is refused rather than pooled.
var errNoPrincipal = errors.New("ratelimit: empty principal id")

// ErrStoreUnavailable wraps every failure of a Limiter's Store: the call
// could not be counted, so it is refused (fail closed).
var ErrStoreUnavailable = errors.New("ratelimit: the limit store is unreachable")

// Store counts requests per key in fixed windows. The memory store is the
// default; a shared store (Redis: INCR, then PEXPIRE on the first hit)
// lets replicas share limits.
type Store interface {
	// Hit records one request for key. If key has no open window at now,
	// a window of length window opens at now. It returns the number of
	// requests in the open window, this one included, and when the window
	// closes.
	Hit(ctx context.Context, key string, now time.Time, window time.Duration) (count int, resetAt time.Time, err error)
}

// Decision is the outcome of Limiter.Allow.
type Decision struct {
	// Allowed reports whether the call may proceed.
	Allowed bool
	// RetryAfter is how long until the window resets; set only when the
	// call is refused.
	RetryAfter time.Duration
	// Remaining is how many more calls the window allows.
	Remaining int
	// Limit is the number of calls a window allows.
	Limit int
	// Window is the window's length.
	Window time.Duration
	// Scope is what the limit counts.
	Scope Scope
	// Setting names the operator setting that changes the limit.
	Setting string
}

// LimiterOptions configures a Limiter. The zero value gives 100 requests a
// minute per principal, in memory, for at most 100,000 principals.
type LimiterOptions struct {
	// Limit is the number of calls allowed per window; zero means
	// DefaultLimit.
	Limit int
	// Window is the window length; zero means DefaultWindow.
	Window time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Store keeps the counters; nil means a new MemoryStore holding at most
	// DefaultMaxPrincipals principals.
	Store Store
	// Setting names the operator setting that changes the limit (a flag
	// such as "--rate-limit"); refusals name it. Empty: not named.
	Setting string
}

// Limiter applies a fixed-window limit per principal ID. It is safe for
// concurrent use when its Store is.
type Limiter struct {
	limit   int
	window  time.Duration
	now     func() time.Time
	store   Store
	setting string
	local   *MemoryStore // AllowLocal's counters, made on first use
	once    sync.Once
}

// NewLimiter returns a Limiter configured by opts, which may be nil.
func NewLimiter(opts *LimiterOptions) (*Limiter, error) {
	var o LimiterOptions
	if opts != nil {
		o = *opts
	}
	if o.Limit < 0 || o.Window < 0 {
		return nil, fmt.Errorf("ratelimit: negative limit (%d) or window (%v)", o.Limit, o.Window)
	}
	l := &Limiter{limit: o.Limit, window: o.Window, now: o.Now, store: o.Store, setting: o.Setting}
	if l.limit == 0 {
		l.limit = DefaultLimit
	}
	if l.window == 0 {
		l.window = DefaultWindow
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.store == nil {
		l.store = NewMemoryStore(DefaultMaxPrincipals)
	}
	return l, nil
}

// Allow records a call by principalID and decides whether it may proceed.
// On a store failure it refuses the call and returns an error that wraps
// ErrStoreUnavailable (fail closed); a caller that ignores the error still
// sees Allowed false.
func (l *Limiter) Allow(ctx context.Context, principalID string) (Decision, error) {
	return l.allow(ctx, l.store, principalID)
}

// AllowLocal decides like Allow but counts in this process's memory only,
// never in the Store. It is for a caller that chose to keep some calls
// going while a shared Store is unreachable: each process then applies the
// limit on its own, so N replicas admit up to N times the limit.
func (l *Limiter) AllowLocal(ctx context.Context, principalID string) (Decision, error) {
	l.once.Do(func() { l.local = NewMemoryStore(DefaultMaxPrincipals) })
	return l.allow(ctx, l.local, principalID)
}

func (l *Limiter) allow(ctx context.Context, store Store, principalID string) (Decision, error) {
	d := Decision{Limit: l.limit, Window: l.window, Scope: ScopePrincipal, Setting: l.setting}
	if principalID == "" {
		return d, errNoPrincipal
	}
	now := l.now()
	count, resetAt, err := store.Hit(ctx, principalID, now, l.window)
	if err != nil {
		return d, fmt.Errorf("%w: counting a call: %w", ErrStoreUnavailable, err)
	}
	d.Remaining = max(0, l.limit-count)
	if count <= l.limit {
		d.Allowed = true
		return d, nil
	}
	d.RetryAfter = max(resetAt.Sub(now), 0)
	return d, nil
}
