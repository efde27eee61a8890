package vdb_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// redisClient is a client of the test's Redis (storetest: a real Redis,
// Cluster or Sentinel when the environment names one, else miniredis).
func redisClient(t *testing.T) redis.UniversalClient {
	t.Helper()
	return storetest.New(t).NewClient(t)
}

// TestReplicasShareGrants: three replicas (one fake, one clock, one Redis)
// share a device grant — started on A, polled on B, paced on C (no second
// /token call inside the interval), redeemed on B, replayed on C without
// reaching /token — and the stored key then answers on A.
func TestReplicasShareGrants(t *testing.T) {
	client := redisClient(t)
	sealer, err := seal.New(testMaster, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := vdb.NewRedisKeys(client, sealer)
	t.Cleanup(func() { _, _ = keys.Delete("local") })
	a := newFixture(t, setup{noKey: true, keys: keys, grants: vdb.NewRedisGrants(client)})
	replica := func() *fixture {
		return newFixture(t, setup{noKey: true, keys: keys, grants: vdb.NewRedisGrants(client), fake: a.fake, clock: a.clock})
	}
	b, c := replica(), replica()

	grant, code := a.start(t)
	a.clock.Advance(5 * time.Second)
	if st := b.poll(t, grant); st["status"] != "pending" {
		t.Fatalf("poll on B: %v", st)
	}
	if n := a.tokenCalls(); n != 1 {
		t.Fatalf("%d /token calls after B's poll, want 1", n)
	}
	if st := c.poll(t, grant); st["status"] != "pending" {
		t.Fatalf("poll on C: %v", st)
	}
	if n := a.tokenCalls(); n != 1 {
		t.Fatalf("C's poll inside the interval reached /token (%d calls): the pacing is per replica", n)
	}
	key := a.fake.AddKey(vdbapi.OrgB, "secret-b")
	if err := a.fake.ApproveDevice(code, key); err != nil {
		t.Fatal(err)
	}
	a.clock.Advance(5 * time.Second)
	res := b.call(t, "vdb_auth_poll", map[string]any{"grant": grant})
	if res.IsError || !strings.Contains(mcptest.Text(res), "signed_in") {
		t.Fatalf("approved poll on B: %s", mcptest.Text(res))
	}
	calls := a.tokenCalls()
	a.clock.Advance(5 * time.Second)
	c.fails(t, "vdb_auth_poll", map[string]any{"grant": grant}, kernel.FailedPrecondition)
	if n := a.tokenCalls(); n != calls {
		t.Fatalf("a replay on C reached /token")
	}
	a.fake.ResetRequests()
	a.ok(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	if r := a.fake.Requests()[0]; r.Org != vdbapi.OrgB {
		t.Fatalf("A did not use the key signed in on B: %+v", r)
	}
}

// TestGrantStoreDownFailsClosed: with the shared store unreachable, a poll,
// a stored-key call and a sign-out fail with store_unavailable, and no
// poll reaches /token.
func TestGrantStoreDownFailsClosed(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = dead.Close() })
	sealer, err := seal.New(testMaster, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, setup{noKey: true, keys: vdb.NewRedisKeys(dead, sealer), grants: vdb.NewRedisGrants(dead)})
	grant, _ := f.start(t)
	f.clock.Advance(5 * time.Second)
	f.fails(t, "vdb_auth_poll", map[string]any{"grant": grant}, kernel.StoreUnavailable)
	if n := f.tokenCalls(); n != 0 {
		t.Fatalf("a poll reached /token with the store down")
	}
	f.fails(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell}, kernel.StoreUnavailable)
	f.fails(t, "vdb_auth_logout", nil, kernel.StoreUnavailable)
}

// TestReplicasCacheIsPerProcess holds the response cache's row of the
// inventory: each replica keeps its own answers, so an answer A keeps is a
// miss on B (one more upstream call, the same answer), and nothing B does
// depends on what A cached.
func TestReplicasCacheIsPerProcess(t *testing.T) {
	a := newFixture(t, setup{})
	b := newFixture(t, setup{fake: a.fake, clock: a.clock})
	a.fake.SetCacheControl("/v2/vuln/", "max-age=300")
	args := map[string]any{"id": vdbapi.Log4Shell}
	first := a.ok(t, "vdb_kev_status", args)
	if again := a.ok(t, "vdb_kev_status", args); again["cached"] != true || a.apiCalls() != 1 {
		t.Fatalf("A did not keep its answer (%d upstream calls): %v", a.apiCalls(), again)
	}
	onB := b.ok(t, "vdb_kev_status", args)
	if onB["cached"] != false || a.apiCalls() != 2 {
		t.Fatalf("B answered from A's cache (%d upstream calls): %v", a.apiCalls(), onB)
	}
	delete(first, "cached")
	delete(onB, "cached")
	if fmt.Sprint(first) != fmt.Sprint(onB) {
		t.Fatalf("A and B answered differently:\n%v\n%v", first, onB)
	}
}
