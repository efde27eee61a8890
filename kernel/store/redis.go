// Package store keeps the kernel's shared state in Redis, so that several
// replicas behind a load balancer act as one: a confirmation token issued by
// one replica is redeemed on any other and is spent on all of them, and a
// rate-limit window counts the calls every replica served.
//
// Every operation is one Lua script, so it is atomic across processes. Every
// Redis error is returned: callers fail closed (the kernel refuses a gated
// call when a token cannot be redeemed or issued, and the rate limiter
// refuses a call it cannot count).
//
// Keys, under the prefix ("bulwark:" unless set):
//
//	confirm:{P}:<sha256(token) hex>  hash: principal, digest, expiry (ms); PEXPIREAT the expiry
//	pending:{P}                      sorted set of the principal's pending token hashes, oldest first
//	rate:{P}                         hash: count and window end (ms); PEXPIRE the window, to collect it
//
// where P is the hex of the first 16 bytes of SHA-256(principal): principal
// IDs never appear in keys, and the braces (a Redis Cluster hash tag) keep
// one principal's keys in one slot, so every script touches one slot and
// works on Redis Cluster (a cluster client: redis.NewClusterClient). A
// token is never stored in clear, only its SHA-256.
//
// ParseURL reads the Redis URL of each deployment (one server, a Cluster,
// Sentinel) with go-redis's own parsers. Behind Sentinel or a Cluster with
// replicas, RedisOptions.WaitReplicas makes every write wait until that
// many replicas hold it (WAIT), so that a failover cannot bring back a
// token already spent.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

// Defaults of RedisOptions' zero values.
const (
	defaultPrefix  = "bulwark:"
	defaultTimeout = 2 * time.Second
)

// errBadURL is returned by ParseRedisURL for any URL it cannot use. It never
// repeats the URL, which may hold a password.
var errBadURL = errors.New("store: the Redis URL is not a valid redis://, rediss:// or unix:// URL")

// RedisOptions configure a Redis store. The zero value is usable.
type RedisOptions struct {
	// Prefix starts every key; "bulwark:" when empty. Replicas that
	// share state must use the same prefix. It must not hold braces, which
	// would change the keys' Redis Cluster hash tag.
	Prefix string
	// Timeout bounds each operation; 2 seconds (defaultTimeout) when zero.
	Timeout time.Duration
	// WaitReplicas, when positive, is how many replicas must acknowledge
	// each write (a token issued or spent, a call counted) before it
	// counts; fewer within half of Timeout fail the operation, and the
	// caller fails closed. Zero does not wait.
	WaitReplicas int
}

// Redis is a confirm.Store and a ratelimit.Store shared through Redis. It
// is safe for concurrent use.
type Redis struct {
	client   redis.UniversalClient
	prefix   string
	timeout  time.Duration
	replicas int
}

var (
	_ confirm.Store   = (*Redis)(nil)
	_ ratelimit.Store = (*Redis)(nil)
)

// NewRedis returns a store over client, which the caller keeps and closes.
func NewRedis(client redis.UniversalClient, opts *RedisOptions) *Redis {
	r := &Redis{client: client, prefix: defaultPrefix, timeout: defaultTimeout}
	if opts != nil && opts.Prefix != "" {
		r.prefix = opts.Prefix
	}
	if opts != nil && opts.Timeout > 0 {
		r.timeout = opts.Timeout
	}
	if opts != nil && opts.WaitReplicas > 0 {
		r.replicas = opts.WaitReplicas
	}
	return r
}

// ParseRedisURL parses the URL of one Redis server (redis://, rediss:// or
// unix://) into client options (go-redis' own syntax); ParseURL takes
// every deployment. Its error never repeats the URL.
func ParseRedisURL(raw string) (*redis.Options, error) {
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, errBadURL
	}
	return o, nil
}

// Ping checks that Redis answers, within the store's timeout.
func (r *Redis) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.client.Ping(ctx).Err(); err != nil {
		return wrap("reaching Redis", err)
	}
	return nil
}

// tag names a principal in keys without revealing it.
func tag(principal string) string {
	h := sha256.Sum256([]byte(principal))
	return hex.EncodeToString(h[:16])
}

// storeError is a Redis failure with the operation that met it.
type storeError struct {
	op  string
	err error
}

func (e *storeError) Error() string { return "store: " + e.op + ": " + e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

func wrap(op string, err error) error { return &storeError{op: op, err: err} }
