package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/store"
)

// newStore connects to the Redis that BULWARK_TEST_REDIS names, or skips
// the test. Each test gets its own key prefix, deleted when it ends.
func newStore(t *testing.T) (*store.Redis, *redis.Client, string) {
	t.Helper()
	raw := os.Getenv("BULWARK_TEST_REDIS")
	if raw == "" {
		t.Skip("BULWARK_TEST_REDIS is not set (a redis:// URL of a disposable Redis); skipping the tests against a real Redis")
	}
	o, err := store.ParseRedisURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("BULWARK_TEST_REDIS is set but Redis does not answer: %v", err)
	}
	prefix := "bulwarktest:" + randomHex(t) + ":"
	t.Cleanup(func() { deletePrefix(t, c, prefix) })
	return store.NewRedis(c, &store.RedisOptions{Prefix: prefix}), c, prefix
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func deletePrefix(t *testing.T, c *redis.Client, prefix string) {
	ctx := context.Background()
	keys, err := keysUnder(ctx, c, prefix)
	if err != nil {
		t.Logf("cleaning up %s*: %v", prefix, err)
		return
	}
	if len(keys) > 0 {
		_ = c.Del(ctx, keys...).Err()
	}
}

func keysUnder(ctx context.Context, c *redis.Client, prefix string) ([]string, error) {
	var keys []string
	iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}

// unreachable is a store whose Redis cannot be reached: every operation
// fails at once.
func unreachable(t *testing.T) *store.Redis {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	return store.NewRedis(c, nil)
}

func TestParseRedisURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		addr string
		db   int
	}{
		{"redis://127.0.0.1:6390/0", "127.0.0.1:6390", 0},
		{"redis://:s3cret@localhost:6379/3", "localhost:6379", 3},
		{"rediss://user:s3cret@redis.internal:6380", "redis.internal:6380", 0},
		{"redis://%zz:s3cret@host/0", "", 0},
		{"redis://:s3cret@host/notadb", "", 0},
		{"http://:s3cret@host/0", "", 0},
		{":s3cret@host", "", 0},
	} {
		o, err := store.ParseRedisURL(tc.raw)
		if tc.addr == "" {
			if !errors.Is(err, store.ErrBadURL) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("ParseRedisURL(%q) = %v, want ErrBadURL without the URL", tc.raw, err)
			}
			continue
		}
		if err != nil || o.Addr != tc.addr || o.DB != tc.db {
			t.Errorf("ParseRedisURL(%q) = %+v, %v", tc.raw, o, err)
		}
	}
}

func FuzzParseRedisURL(f *testing.F) {
	f.Add("redis://:pw@127.0.0.1:6379/0")
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := store.ParseRedisURL(raw)
		if err != nil && err != store.ErrBadURL {
			t.Fatalf("error %v is not ErrBadURL", err)
		}
	})
}
