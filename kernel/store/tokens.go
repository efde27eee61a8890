package store

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/confirm"
)

// putScript records a pending token and caps the principal's pending set.
//
//	KEYS[1] token key, KEYS[2] the principal's pending set
//	ARGV[1] principal, ARGV[2] digest (hex), ARGV[3] expiry (Unix ms),
//	ARGV[4] max pending, ARGV[5] token key prefix, ARGV[6] token hash (hex)
//
// Members whose token key is gone (spent or expired) are dropped first; then
// the oldest are evicted until one more fits. Scores are the expiry, raised
// to keep insertion order strict, so the oldest comes first.
var putScript = redis.NewScript(`
local members = redis.call('ZRANGE', KEYS[2], 0, -1)
for _, m in ipairs(members) do
  if redis.call('EXISTS', ARGV[5] .. m) == 0 then
    redis.call('ZREM', KEYS[2], m)
  end
end
local max = tonumber(ARGV[4])
local n = redis.call('ZCARD', KEYS[2])
if n >= max then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, n - max)) do
    redis.call('DEL', ARGV[5] .. m)
    redis.call('ZREM', KEYS[2], m)
  end
end
local score = tonumber(ARGV[3])
local top = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if top[2] and tonumber(top[2]) >= score then
  score = tonumber(top[2]) + 1
end
redis.call('HSET', KEYS[1], 'p', ARGV[1], 'd', ARGV[2], 'e', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], score, ARGV[6])
redis.call('PEXPIREAT', KEYS[2], score)
return 1
`)

// redeemScript spends a token that matches in full.
//
//	KEYS[1] token key, KEYS[2] the principal's pending set
//	ARGV[1] principal, ARGV[2] digest (hex), ARGV[3] now (Unix ms),
//	ARGV[4] token hash (hex)
//
// A token bound to another principal or digest stays pending. A matching
// token is deleted; it counts as redeemed only if it has not expired at now.
var redeemScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'p', 'd', 'e')
if not v[1] or v[1] ~= ARGV[1] or v[2] ~= ARGV[2] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[4])
if tonumber(ARGV[3]) >= tonumber(v[3]) then
  return 0
end
return 1
`)

func (r *Redis) tokenPrefix(principal string) string {
	return r.prefix + "confirm:{" + tag(principal) + "}:"
}

func (r *Redis) pendingKey(principal string) string {
	return r.prefix + "pending:{" + tag(principal) + "}"
}

// Put implements confirm.Store: it records p, evicting the principal's
// oldest pending tokens beyond limit. The token key expires at p.Expires.
func (r *Redis) Put(ctx context.Context, p confirm.Pending, limit int) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	h := hex.EncodeToString(p.TokenHash[:])
	pre := r.tokenPrefix(p.Principal)
	keys := []string{pre + h, r.pendingKey(p.Principal)}
	err := r.exec(ctx, putScript, keys, p.Principal, hex.EncodeToString(p.Digest[:]),
		p.Expires.UnixMilli(), max(limit, 1), pre, h).Err()
	if err != nil {
		return wrap("recording a confirmation token", err)
	}
	return nil
}

// Redeem implements confirm.Store: it spends the token atomically if it
// belongs to principal, matches digest and has not expired at now.
func (r *Redis) Redeem(ctx context.Context, principal string, tokenHash, digest [32]byte, now time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	h := hex.EncodeToString(tokenHash[:])
	keys := []string{r.tokenPrefix(principal) + h, r.pendingKey(principal)}
	n, err := r.exec(ctx, redeemScript, keys, principal, hex.EncodeToString(digest[:]), now.UnixMilli(), h).Int()
	if err != nil {
		return false, wrap("redeeming a confirmation token", err)
	}
	return n == 1, nil
}
