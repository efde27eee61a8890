package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// hitScript counts one request in a fixed window.
//
//	KEYS[1] window key
//	ARGV[1] now (Unix ms), ARGV[2] window length (ms)
//
// The window's end is decided by the callers' clock (now + window when it
// opens), as in the memory store, so a replica whose clock lags Redis' can
// never make a window vanish early. The key's own TTL (the window length,
// set when the window opens) only collects it.
var hitScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local reset = tonumber(redis.call('HGET', KEYS[1], 'r'))
if not reset or now >= reset then
  reset = now + tonumber(ARGV[2])
  redis.call('HSET', KEYS[1], 'c', 1, 'r', reset)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, reset}
end
return {redis.call('HINCRBY', KEYS[1], 'c', 1), reset}
`)

// Hit implements ratelimit.Store: it counts one request for key in the
// window open at now, opening one of length window if none is.
func (r *Redis) Hit(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	ms := max(window.Milliseconds(), 1)
	res, err := r.exec(ctx, hitScript, []string{r.prefix + "rate:{" + tag(key) + "}"}, now.UnixMilli(), ms).Int64Slice()
	if err != nil {
		return 0, time.Time{}, wrap("counting a call", err)
	}
	if len(res) != 2 {
		return 0, time.Time{}, wrap("counting a call", fmt.Errorf("unexpected reply of %d values", len(res)))
	}
	return int(res[0]), time.UnixMilli(res[1]), nil
}
