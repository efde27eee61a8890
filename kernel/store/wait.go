package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// errNotReplicated is the error of a write that fewer replicas than
// RedisOptions.WaitReplicas acknowledged in time. The write may stand on
// the primary; the caller fails closed all the same, since a failover
// could lose it.
var errNotReplicated = errors.New("fewer replicas than required acknowledged the write")

// exec runs script over keys (all in one Cluster slot). When the store
// waits for replicas, it runs on the connection of the primary that holds
// keys[0], followed by WAIT on the same connection, and fails unless
// enough replicas acknowledged it: a token spent, or a call counted, on a
// primary that dies before its replicas heard of it would otherwise come
// back after the failover (a token confirming twice).
func (r *Redis) exec(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if r.replicas == 0 {
		return script.Run(ctx, r.client, keys, args...)
	}
	node, err := r.primary(ctx, keys[0])
	if err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	var run *redis.Cmd
	var wait *redis.Cmd
	_, err = node.Pipelined(ctx, func(p redis.Pipeliner) error {
		run = script.Eval(ctx, p, keys, args...)
		wait = p.Do(ctx, "wait", r.replicas, r.waitTimeout().Milliseconds())
		return nil
	})
	switch {
	case run != nil && run.Err() != nil:
		r.redirected(ctx, run.Err())
		return run
	case err != nil:
		run.SetErr(err)
	default:
		if n, werr := wait.Int64(); werr != nil || n < int64(r.replicas) {
			run.SetErr(fmt.Errorf("%w (%d of %d)", errNotReplicated, n, r.replicas))
		}
	}
	return run
}

// primary is the client of the node that holds key: the Cluster's primary
// for its slot, else the store's one client (a Sentinel client always
// talks to the current primary).
func (r *Redis) primary(ctx context.Context, key string) (*redis.Client, error) {
	switch c := r.client.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	case *redis.Client:
		return c, nil
	}
	return nil, fmt.Errorf("waiting for replicas needs a go-redis Client or ClusterClient, not %T", r.client)
}

// redirected asks a Cluster client to reload the slot map after a node
// said MOVED or ASK to a command sent to it directly (exec does not follow
// redirections: the call fails and the next one goes to the new owner).
func (r *Redis) redirected(ctx context.Context, err error) {
	c, ok := r.client.(*redis.ClusterClient)
	if !ok {
		return
	}
	if _, moved := redis.IsMovedError(err); moved {
		c.ReloadState(ctx)
	} else if _, ask := redis.IsAskError(err); ask {
		c.ReloadState(ctx)
	}
}

// waitTimeout bounds WAIT: half the store's timeout, leaving the rest to
// reach the node and run the script.
func (r *Redis) waitTimeout() time.Duration { return max(r.timeout/2, time.Millisecond) }
