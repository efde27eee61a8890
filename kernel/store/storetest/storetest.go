// Package storetest gives tests a Redis to run the shared-state store
// against, so that the Lua scripts are exercised everywhere:
//
//   - BULWARK_TEST_REDIS_CLUSTER (comma-separated host:port seeds): a Redis
//     Cluster, as scripts/test starts it;
//   - else BULWARK_TEST_REDIS_SENTINEL (a Sentinel URL, as store.ParseURL
//     reads it: redis://SENTINEL?master_name=NAME): a primary with a
//     replica behind Sentinel, as scripts/test starts it;
//   - else BULWARK_TEST_REDIS (a redis:// URL): one real Redis;
//   - else an in-process Redis (miniredis), except under CI=true, where a
//     missing Redis fails the test: the replica guarantee must not rest on
//     an emulation alone in CI.
//
// Each call gets a key prefix of its own, deleted when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/store"
)

// Kinds of Target.
const (
	KindCluster   = "cluster"
	KindSentinel  = "sentinel"
	KindRedis     = "redis"
	KindMiniredis = "miniredis"
)

// Target is a Redis for one test.
type Target struct {
	// Kind is KindRedis, KindMiniredis, KindCluster or KindSentinel.
	Kind string
	// URL names the Redis as BULWARK_REDIS_URL would (store.ParseURL).
	URL string
	// Prefix is the test's own key prefix.
	Prefix string
	// NewClient returns a fresh client (one per simulated replica); the
	// test closes it at cleanup.
	NewClient func(t testing.TB) redis.UniversalClient
	mini      *miniredis.Miniredis
}

// New returns the Redis the environment names (see the package comment).
func New(t testing.TB) *Target {
	t.Helper()
	tg := &Target{Prefix: "bulwarktest:" + randomHex(t) + ":"}
	switch seeds, sentinel, url := os.Getenv("BULWARK_TEST_REDIS_CLUSTER"), os.Getenv("BULWARK_TEST_REDIS_SENTINEL"), os.Getenv("BULWARK_TEST_REDIS"); {
	case seeds != "":
		tg.Kind = KindCluster
		addrs := strings.Split(seeds, ",")
		tg.URL = "redis://" + addrs[0] + "?addr=" + strings.Join(addrs[1:], "&addr=")
	case sentinel != "":
		tg.Kind, tg.URL = KindSentinel, sentinel
	case url != "":
		tg.Kind, tg.URL = KindRedis, url
	case os.Getenv("CI") == "true":
		t.Fatal("CI=true but none of BULWARK_TEST_REDIS, BULWARK_TEST_REDIS_CLUSTER and BULWARK_TEST_REDIS_SENTINEL is set: the shared-state tests must run against a real Redis in CI (scripts/test starts one)")
	default:
		tg.Kind = KindMiniredis
		tg.mini = miniredis.RunT(t)
		tg.URL = "redis://" + tg.mini.Addr() + "/0"
	}
	e, err := store.ParseURL(tg.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	tg.NewClient = func(t testing.TB) redis.UniversalClient { return closeLater(t, e.NewClient()) }
	c := tg.NewClient(t)
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("the test Redis (%s) does not answer: %v", tg.Kind, err)
	}
	t.Cleanup(func() { tg.deleteAll(t, c) })
	return tg
}

// Store returns a store over a fresh client, under the test's prefix.
// Behind Sentinel every write waits for the replica, as the binary's
// default there is.
func (tg *Target) Store(t testing.TB) *store.Redis {
	return store.NewRedis(tg.NewClient(t), &store.RedisOptions{Prefix: tg.Prefix, WaitReplicas: tg.WaitReplicas()})
}

// WaitReplicas is the RedisOptions.WaitReplicas the binary would use on
// this Redis: 1 behind Sentinel, else 0.
func (tg *Target) WaitReplicas() int {
	if tg.Kind == KindSentinel {
		return 1
	}
	return 0
}

// Sleep lets d pass for the Redis too: miniredis expires keys only when
// told that time passed.
func (tg *Target) Sleep(d time.Duration) {
	time.Sleep(d)
	if tg.mini != nil {
		tg.mini.FastForward(d)
	}
}

// Keys lists the keys under the test's prefix plus more, on every node.
func (tg *Target) Keys(ctx context.Context, c redis.UniversalClient, more string) ([]string, error) {
	return Scan(ctx, c, tg.Prefix+more+"*")
}

// Scan lists the keys matching pattern on every node of c (a Cluster's
// keys are spread over its primaries), for stores whose keys are not under
// a test's prefix.
func Scan(ctx context.Context, c redis.UniversalClient, pattern string) ([]string, error) {
	var keys []string
	scan := func(ctx context.Context, n redis.Cmdable) error {
		iter := n.Scan(ctx, 0, pattern, 100).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		return iter.Err()
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		var mu sync.Mutex // ForEachMaster calls in parallel
		err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return scan(ctx, n)
		})
		return keys, err
	}
	return keys, scan(ctx, c)
}

func (tg *Target) deleteAll(t testing.TB, c redis.UniversalClient) {
	ctx := context.Background()
	keys, err := tg.Keys(ctx, c, "")
	if err != nil {
		t.Logf("cleaning up %s*: %v", tg.Prefix, err)
		return
	}
	for _, k := range keys { // one by one: a cluster refuses a DEL across slots
		_ = c.Del(ctx, k).Err()
	}
}

func closeLater(t testing.TB, c redis.UniversalClient) redis.UniversalClient {
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
