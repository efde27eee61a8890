package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/store"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// TestWaitReplicasKeepsASpentTokenSpent: a token is spent after the
// replica stopped hearing from the primary; the primary dies and the
// replica is promoted, as Sentinel does. Waiting for the replica, the spend fails
// (the kernel refuses the call) and the token confirms once on the new
// primary; without waiting it confirmed on the old primary and confirms
// again on the new one.
func TestWaitReplicasKeepsASpentTokenSpent(t *testing.T) {
	for _, tc := range []struct {
		wait int
		want int // confirmations
	}{{1, 1}, {0, 2}} {
		primary, pcmd := storetest.Server(t, "--repl-diskless-sync-delay", "0")
		replica, _ := storetest.Server(t, "--replicaof", "127.0.0.1", portOf(primary))
		pc := redis.NewClient(&redis.Options{Addr: primary, MaxRetries: -1})
		rc := redis.NewClient(&redis.Options{Addr: replica, MaxRetries: -1})
		defer pc.Close()
		defer rc.Close()
		onPrimary := store.NewRedis(pc, &store.RedisOptions{Timeout: time.Second, WaitReplicas: tc.wait})
		onReplica := store.NewRedis(rc, &store.RedisOptions{Timeout: time.Second})
		ctx := context.Background()
		waitLink(t, rc)

		p := pending("tok", "alice", "delete www", time.Now().Add(time.Minute))
		for i := 0; onPrimary.Put(ctx, p, 8) != nil; i++ { // until the primary counts its replica
			if i == 50 {
				t.Fatal("the primary never counted its replica")
			}
			time.Sleep(100 * time.Millisecond)
		}
		for i := 0; rc.DBSize(ctx).Val() == 0; i++ { // the replica has it either way
			if i == 50 {
				t.Fatal("the token never reached the replica")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := rc.Do(ctx, "replicaof", "no", "one").Err(); err != nil {
			t.Fatal(err)
		}
		confirmed := 0
		start := time.Now()
		if ok, err := onPrimary.Redeem(ctx, "alice", p.TokenHash, p.Digest, time.Now()); ok && err == nil {
			confirmed++
		} else if tc.wait > 0 && time.Since(start) > 2*time.Second {
			t.Errorf("the refused spend took %v, more than twice the store's timeout", time.Since(start))
		}
		_ = pcmd.Process.Kill()
		if ok, err := onReplica.Redeem(ctx, "alice", p.TokenHash, p.Digest, time.Now()); ok && err == nil {
			confirmed++
		}
		if confirmed != tc.want {
			t.Errorf("waiting for %d replicas: the token confirmed %d times, want %d", tc.wait, confirmed, tc.want)
		}
	}
}

// TestWaitReplicasWithoutAReplicaFailsClosed: with no replica to wait for,
// every write fails (and the caller refuses), within the store's timeout.
func TestWaitReplicasWithoutAReplicaFailsClosed(t *testing.T) {
	tg := storetest.New(t)
	if tg.Kind == storetest.KindSentinel {
		t.Skip("the Sentinel's primary has replicas")
	}
	s := store.NewRedis(tg.NewClient(t), &store.RedisOptions{Prefix: tg.Prefix, Timeout: 400 * time.Millisecond, WaitReplicas: 1})
	ctx := context.Background()
	p := pending("tok", "alice", "delete www", time.Now().Add(time.Minute))
	start := time.Now()
	if err := s.Put(ctx, p, 8); err == nil {
		t.Error("Put without a replica succeeded")
	}
	if ok, err := s.Redeem(ctx, "alice", p.TokenHash, p.Digest, time.Now()); err == nil || ok {
		t.Errorf("Redeem without a replica: %v %v", ok, err)
	}
	if _, _, err := s.Hit(ctx, "alice", time.Now(), time.Minute); err == nil {
		t.Error("Hit without a replica succeeded")
	}
	if d := time.Since(start); d > 3*400*time.Millisecond {
		t.Errorf("three refused writes took %v", d)
	}
}

// waitLink waits until the replica behind c has its link to the primary.
func waitLink(t *testing.T, c *redis.Client) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if info, _ := c.Info(context.Background(), "replication").Result(); containsLine(info, "master_link_status:up") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the replica never linked to its primary")
}
