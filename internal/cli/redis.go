package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/store"
)

// redisConn is the shared-state Redis: its URL (one server, a Cluster or
// Sentinel: store.ParseURL), a password kept apart from it, and, once
// connected, the one client every part of the process uses.
type redisConn struct {
	redisURL      secret
	redisPassword secret
	redisWait     autoInt
	redisClient   redis.UniversalClient
}

// registerRedis adds -redis-url-file (BULWARK_REDIS_URL) and
// -redis-password-file (BULWARK_REDIS_PASSWORD); what says what the Redis
// is for. withWait adds -redis-wait-replicas.
func (r *redisConn) registerRedis(f *flags, what string, withWait bool) {
	f.Secret(&r.redisURL, "redis-url-file", "BULWARK_REDIS_URL", what+": a redis:// or rediss:// URL of one server, a Cluster (several seeds: ?addr=HOST:PORT&addr=…) or Sentinel (?master_name=NAME&addr=SENTINEL…), as docs/operations.md shows")
	f.Secret(&r.redisPassword, "redis-password-file", "BULWARK_REDIS_PASSWORD", "the password of the Redis nodes, kept out of the URL")
	if withWait {
		f.AutoInt(&r.redisWait, "redis-wait-replicas", "BULWARK_REDIS_WAIT_REPLICAS", "`N` Redis replicas must hold each token issued or spent and each call counted before it counts (WAIT), so that a failover cannot bring a spent token back (auto: 1 with Sentinel, 0 otherwise)")
	}
}

// redisEndpoint parses the URL with the password. A usage error names the
// setting, never the URL.
func (r *redisConn) redisEndpoint() (*store.Endpoint, error) {
	e, err := store.ParseURL(r.redisURL.value, r.redisPassword.value)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errUsage, r.redisURL.source, err)
	}
	return e, nil
}

// connectRedis connects to the Redis the settings name and stops startup
// unless it answers within 5 s. It routes go-redis's own (process-wide)
// log lines into logger first: the command owns the process.
func (r *redisConn) connectRedis(logger *slog.Logger) (*store.Endpoint, error) {
	if r.redisPassword.set() && !r.redisURL.set() {
		return nil, fmt.Errorf("%w: %s is set without a Redis URL (-redis-url-file or BULWARK_REDIS_URL)", errUsage, r.redisPassword.source)
	}
	store.RouteClientLog(logger)
	e, err := r.redisEndpoint()
	if err != nil {
		return nil, err
	}
	client := e.NewClient()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Check(ctx, client); err != nil {
		_ = client.Close()
		if errors.Is(err, store.ErrClusterNode) {
			return nil, fmt.Errorf("%w: %s: %v", errUsage, r.redisURL.source, err)
		}
		return nil, fmt.Errorf("reaching the shared-state Redis (%s at %s): %w", e.Topology, strings.Join(e.Addrs(), ","), err)
	}
	r.redisClient = client
	logger.Info("shared state in Redis", "topology", string(e.Topology), "addrs", strings.Join(e.Addrs(), ","))
	return e, nil
}

// sharedStore connects and returns the kernel's store on the client: the
// confirmation tokens, rate-limit windows and requestState tokens every
// replica shares.
func (s *serving) sharedStore(logger *slog.Logger) (*store.Redis, error) {
	e, err := s.connectRedis(logger)
	if err != nil {
		return nil, err
	}
	wait := 0
	if e.Topology == store.Sentinel {
		wait = 1
	}
	wait = s.redisWait.or(wait)
	if wait < 0 {
		return nil, fmt.Errorf("%w: -redis-wait-replicas must not be negative", errUsage)
	}
	return store.NewRedis(s.redisClient, &store.RedisOptions{WaitReplicas: wait}), nil
}
