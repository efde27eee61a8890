package vdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// GrantStore paces device-grant polls and remembers the grants that ended,
// until they expire: in process (the default), or in Redis so that
// replicas share it — a grant polled on two replicas is paced once, and a
// grant redeemed on one is never sent to /token again by another.
type GrantStore interface {
	// Poll claims a /token call for the grant whose device code is dc,
	// polled by principal, creating its state on the first poll (the
	// first call allowed at p.Issued + p.Interval). The claim says the
	// grant ended (Done), or how long to wait (Wait > 0), or that the
	// caller may call /token now: then the next call is moved one
	// interval on. A principal with maxGrantsPerPrincipal live grants
	// gets no new one (resource_exhausted).
	Poll(principal, dc string, p GrantPoll) (GrantClaim, error)
	// SlowDown adds slowDownStep to the grant's interval (at most
	// maxInterval), moves its next call one interval past now, and
	// returns the interval.
	SlowDown(principal, dc string, now time.Time) (time.Duration, error)
	// End marks the grant redeemed, denied or expired: never polled again.
	End(principal, dc string) error
}

// GrantPoll is what Poll knows of a grant.
type GrantPoll struct {
	Now, Issued, Expires time.Time
	Interval             time.Duration
}

// GrantClaim is Poll's answer.
type GrantClaim struct {
	Done     bool          // the grant ended
	Wait     time.Duration // > 0: too early by this much
	Interval time.Duration // the grant's current interval
}

// errTooManyGrants is the refusal of a principal's grant past its share.
func errTooManyGrants(table bool) error {
	hint := fmt.Sprintf("Pending sign-ins end within %d minutes; finish or abandon yours.", int(maxGrantTTL/time.Minute))
	if table {
		return kernel.Errorf(kernel.ResourceExhausted, "Too many sign-ins are pending on this server.").WithHint("%s", hint)
	}
	return kernel.Errorf(kernel.ResourceExhausted, "You have %d sign-ins pending, the most one caller may have.", maxGrantsPerPrincipal).WithHint("%s", hint)
}

// grantState is what the in-process store remembers of a grant.
type grantState struct {
	next      time.Time     // no /token call before this
	interval  time.Duration // the current interval
	done      bool          // redeemed, denied or expired: never polled again
	expires   time.Time
	principal string // who polls it, for the per-principal share
}

// memoryGrants is the in-process GrantStore: at most maxGrants states in
// all, and maxGrantsPerPrincipal of one principal.
type memoryGrants struct {
	mu  sync.Mutex
	m   map[[32]byte]*grantState
	per map[string]int // live states per principal
	now func() time.Time
}

func newMemoryGrants(now func() time.Time) *memoryGrants {
	return &memoryGrants{m: map[[32]byte]*grantState{}, per: map[string]int{}, now: now}
}

// Poll implements GrantStore.
func (g *memoryGrants) Poll(principal, dc string, p GrantPoll) (GrantClaim, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := sha256.Sum256([]byte(dc))
	st, ok := g.m[k]
	if !ok {
		if len(g.m) >= maxGrants || g.per[principal] >= maxGrantsPerPrincipal {
			g.dropExpired()
		}
		switch {
		case g.per[principal] >= maxGrantsPerPrincipal:
			return GrantClaim{}, errTooManyGrants(false)
		case len(g.m) >= maxGrants:
			return GrantClaim{}, errTooManyGrants(true)
		}
		st = &grantState{interval: p.Interval, expires: p.Expires, next: p.Issued.Add(p.Interval), principal: principal}
		g.m[k] = st
		g.per[principal]++
	}
	switch {
	case st.done:
		return GrantClaim{Done: true, Interval: st.interval}, nil
	case p.Now.Before(st.next):
		return GrantClaim{Wait: st.next.Sub(p.Now), Interval: st.interval}, nil
	}
	st.next = p.Now.Add(st.interval)
	return GrantClaim{Interval: st.interval}, nil
}

// SlowDown implements GrantStore.
func (g *memoryGrants) SlowDown(_, dc string, now time.Time) (time.Duration, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st, ok := g.m[sha256.Sum256([]byte(dc))]
	if !ok {
		return slowDownStep, nil
	}
	st.interval = min(st.interval+slowDownStep, maxInterval)
	st.next = now.Add(st.interval)
	return st.interval, nil
}

// End implements GrantStore.
func (g *memoryGrants) End(_, dc string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st, ok := g.m[sha256.Sum256([]byte(dc))]; ok {
		st.done = true
	}
	return nil
}

// dropExpired forgets the states whose grants have expired.
func (g *memoryGrants) dropExpired() {
	now := g.now()
	for k, st := range g.m {
		if !now.Before(st.expires) {
			delete(g.m, k)
			if g.per[st.principal]--; g.per[st.principal] <= 0 {
				delete(g.per, st.principal)
			}
		}
	}
}

// RedisGrants is the GrantStore replicas share: one hash a grant, named by
// digests of the principal and the device code (neither in clear), that
// expires with the grant, and a sorted set of the principal's live grants
// for its share, both in the principal's hash slot. Every step is one Lua
// script, so two replicas polling at once make one /token call. An
// unreachable Redis fails the poll closed (store_unavailable).
type RedisGrants struct {
	client redis.UniversalClient
	prefix string
}

// NewRedisGrants returns a store over client (which the caller keeps).
func NewRedisGrants(client redis.UniversalClient) *RedisGrants {
	return &RedisGrants{client: client, prefix: "bulwark:vdb:grant:"}
}

// errSharedStore marks an error of the shared store: the call that needed
// it fails with store_unavailable.
var errSharedStore = errors.New("the shared store failed")

func storeErr(op string, err error) error {
	return fmt.Errorf("%w: %s: %w", errSharedStore, op, err)
}

func (r *RedisGrants) keys(principal, dc string) []string {
	p := sha256.Sum256([]byte(principal))
	d := sha256.Sum256([]byte(dc))
	slot := "{" + hex.EncodeToString(p[:16]) + "}"
	return []string{r.prefix + slot + ":" + hex.EncodeToString(d[:]), r.prefix + slot + ":live"}
}

// pollScript: KEYS grant, live; ARGV now, interval, issued, expires (ms,
// the server's clock), the share, and the grant's time to live (ms: Redis
// expires keys by its own clock, which may differ). Returns {kind, wait, interval}: kind 2 claimed, 1 done, 0
// wait, -1 over the share.
var pollScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local g = redis.call('HMGET', KEYS[1], 'next', 'interval', 'done')
if not g[1] then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return {-1, 0, 0} end
  local nxt = tonumber(ARGV[3]) + tonumber(ARGV[2])
  redis.call('HSET', KEYS[1], 'next', nxt, 'interval', ARGV[2], 'done', 0)
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('ZADD', KEYS[2], ARGV[4], KEYS[1])
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[6]) then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
  g = {tostring(nxt), ARGV[2], '0'}
end
local iv = tonumber(g[2])
if g[3] == '1' then return {1, 0, iv} end
local nxt = tonumber(g[1])
if now < nxt then return {0, nxt - now, iv} end
redis.call('HSET', KEYS[1], 'next', now + iv)
return {2, 0, iv}
`)

// slowDownScript: KEYS grant; ARGV now, step, max (ms). Returns the interval.
var slowDownScript = redis.NewScript(`
local iv = tonumber(redis.call('HGET', KEYS[1], 'interval'))
if not iv then return tonumber(ARGV[2]) end
iv = math.min(iv + tonumber(ARGV[2]), tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'interval', iv, 'next', tonumber(ARGV[1]) + iv)
return iv
`)

// endScript: KEYS grant. Marks it done if it exists (it keeps its expiry).
var endScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'done', 1) end
return 0
`)

// Poll implements GrantStore.
func (r *RedisGrants) Poll(principal, dc string, p GrantPoll) (GrantClaim, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	v, err := pollScript.Run(ctx, r.client, r.keys(principal, dc), p.Now.UnixMilli(), p.Interval.Milliseconds(),
		p.Issued.UnixMilli(), p.Expires.UnixMilli(), maxGrantsPerPrincipal, max(p.Expires.Sub(p.Now).Milliseconds(), 1)).Int64Slice()
	if err != nil {
		return GrantClaim{}, storeErr("polling a sign-in grant", err)
	}
	if len(v) != 3 {
		return GrantClaim{}, storeErr("polling a sign-in grant", fmt.Errorf("%d values from the script", len(v)))
	}
	c := GrantClaim{Interval: time.Duration(v[2]) * time.Millisecond}
	switch v[0] {
	case -1:
		return GrantClaim{}, errTooManyGrants(false)
	case 1:
		c.Done = true
	case 0:
		c.Wait = time.Duration(v[1]) * time.Millisecond
	}
	return c, nil
}

// SlowDown implements GrantStore.
func (r *RedisGrants) SlowDown(principal, dc string, now time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	iv, err := slowDownScript.Run(ctx, r.client, r.keys(principal, dc)[:1], now.UnixMilli(), slowDownStep.Milliseconds(), maxInterval.Milliseconds()).Int64()
	if err != nil {
		return 0, storeErr("pacing a sign-in grant", err)
	}
	return time.Duration(iv) * time.Millisecond, nil
}

// End implements GrantStore.
func (r *RedisGrants) End(principal, dc string) error {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	if err := endScript.Run(ctx, r.client, r.keys(principal, dc)[:1]).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return storeErr("ending a sign-in grant", err)
	}
	return nil
}
