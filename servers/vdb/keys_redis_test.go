package vdb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// TestRedisKeysSharedSealedPerPrincipal: two replicas (two stores over one
// Redis) share a stored key; it is sealed at rest (the raw value never
// appears in Redis), bound to its principal, and deleted for both.
func TestRedisKeysSharedSealedPerPrincipal(t *testing.T) {
	client := redisClient(t)
	sealer, err := seal.New(testMaster, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := vdb.NewRedisKeys(client, sealer), vdb.NewRedisKeys(client, sealer)
	const key = "11111111-1111-4111-8111-111111111111:abcdef0123456789"
	if err := a.Put("alice", key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = a.Delete("alice") })
	if got, ok, err := b.Get("alice"); err != nil || !ok || got != key {
		t.Fatalf("replica b: %q %v %v", got, ok, err)
	}
	if _, ok, _ := b.Get("bob"); ok {
		t.Fatal("bob read a key")
	}
	keys, err := storetest.Scan(context.Background(), client, "bulwark:vdb:key:*")
	if err != nil || len(keys) == 0 {
		t.Fatalf("no stored key found in Redis (%v)", err)
	}
	for _, k := range keys {
		v, _ := client.Get(context.Background(), k).Result()
		if strings.Contains(v, "abcdef0123456789") || strings.Contains(k, "alice") {
			t.Fatalf("redis holds the key or the principal in clear: %s = %s", k, v)
		}
	}
	if ok, err := b.Delete("alice"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if _, ok, _ := a.Get("alice"); ok {
		t.Fatal("still signed in on replica a")
	}
}
