package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/store"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// newStore returns a store on the test's Redis (storetest: a real Redis or
// Cluster when the environment names one, else miniredis; never a skip),
// with a client to inspect it.
func newStore(t *testing.T) (*store.Redis, *storetest.Target, redis.UniversalClient) {
	t.Helper()
	tg := storetest.New(t)
	c := tg.NewClient(t)
	return store.NewRedis(c, &store.RedisOptions{Prefix: tg.Prefix}), tg, c
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
			if !errors.Is(err, store.ErrBadURLForTest) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("ParseRedisURL(%q) = %v, want errBadURL without the URL", tc.raw, err)
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
		if err != nil && err != store.ErrBadURLForTest {
			t.Fatalf("error %v is not errBadURL", err)
		}
	})
}
