package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/store"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// churn issues tokens through one replica's store and redeems each on the
// other, then replays it on the first, until stopped; it counts how often
// each token confirmed and when operations failed.
type churn struct {
	mu       sync.Mutex
	redeemed map[string]int
	failed   []time.Time
	lastOK   time.Time
	ops      int
	stop     chan struct{}
	done     sync.WaitGroup
}

// startChurn runs workers goroutines of churn over stores, as principal.
func startChurn(stores [2]*store.Redis, principal string, workers int) *churn {
	c := &churn{redeemed: map[string]int{}, stop: make(chan struct{})}
	for w := range workers {
		c.done.Add(1)
		go func() {
			defer c.done.Done()
			for i := 0; ; i++ {
				select {
				case <-c.stop:
					return
				default:
				}
				c.once(stores[(w+i)%2], stores[(w+i+1)%2], principal)
			}
		}()
	}
	return c
}

// once is one token's life: issued on a, redeemed on b, replayed on a.
func (c *churn) once(a, b *store.Redis, principal string) {
	ctx := context.Background()
	tok := randomToken()
	p := pending(tok, principal, "delete www", time.Now().Add(time.Minute))
	if err := a.Put(ctx, p, 64); err != nil {
		c.record(tok, 0, err)
		time.Sleep(10 * time.Millisecond)
		return
	}
	for _, s := range []*store.Redis{b, a} {
		ok, err := s.Redeem(ctx, principal, p.TokenHash, p.Digest, time.Now())
		n := 0
		if ok {
			n = 1
		}
		c.record(tok, n, err)
	}
}

func (c *churn) record(tok string, n int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops++
	c.redeemed[tok] += n
	if err != nil {
		c.failed = append(c.failed, time.Now())
	} else {
		c.lastOK = time.Now()
	}
}

// finish stops the workers and checks that no token confirmed twice; it
// returns the failures and the operations.
func (c *churn) finish(t *testing.T) (failed []time.Time, ops int) {
	t.Helper()
	close(c.stop)
	c.done.Wait()
	for tok, n := range c.redeemed {
		if n > 1 {
			t.Errorf("token %s confirmed %d times", tok[:8], n)
		}
	}
	return c.failed, c.ops
}

// settle waits until operations have gone on for quiet without a
// failure, at most limit; it reports whether they did.
func (c *churn) settle(quiet, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c.mu.Lock()
		last := time.Time{}
		if n := len(c.failed); n > 0 {
			last = c.failed[n-1]
		}
		ok := c.lastOK.After(last) && time.Since(last) > quiet
		c.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// window describes the failures: how many, from the first to the last.
func window(failed []time.Time, start time.Time) (first, last time.Duration) {
	if len(failed) == 0 {
		return 0, 0
	}
	return failed[0].Sub(start), failed[len(failed)-1].Sub(start)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// issued puts n tokens through s before a failure, and returns them.
func issued(t *testing.T, s *store.Redis, principal string, n int) []confirm.Pending {
	t.Helper()
	var out []confirm.Pending
	for range n {
		p := pending(randomToken(), principal, "delete www", time.Now().Add(5*time.Minute))
		put(t, s, p, 64)
		out = append(out, p)
	}
	return out
}

// redeemOnce checks that each token confirms once on s, and not again on
// other.
func redeemOnce(t *testing.T, s, other *store.Redis, principal string, toks []confirm.Pending) {
	t.Helper()
	for i, p := range toks {
		if ok, err := s.Redeem(context.Background(), principal, p.TokenHash, p.Digest, time.Now()); err != nil || !ok {
			t.Errorf("token %d issued before the failure: %v %v", i, ok, err)
		}
		if ok, _ := other.Redeem(context.Background(), principal, p.TokenHash, p.Digest, time.Now()); ok {
			t.Errorf("token %d issued before the failure confirmed twice", i)
		}
	}
}

// TestSentinelFailoverNeverConfirmsTwice freezes the Sentinel's primary
// (SIGSTOP: a crash, as far as anyone can tell) under a load of tokens
// issued on one replica and spent on another, until Sentinel has promoted
// a replica: operations fail only while the failover lasts, every token
// confirms at most once, and the tokens issued before it (each write waits
// for a replica) each confirm exactly once after it. Without the wait, a
// token spent on the primary just before it stopped, and not yet copied,
// would be back on the new primary and confirm again.
func TestSentinelFailoverNeverConfirmsTwice(t *testing.T) {
	tg := storetest.New(t)
	if tg.Kind != storetest.KindSentinel {
		t.Skipf("needs Redis Sentinel (BULWARK_TEST_REDIS_SENTINEL; scripts/test starts one), not %s", tg.Kind)
	}
	ctx := context.Background()
	sentinel, master := sentinelOf(t, tg)
	switched := sentinel.Subscribe(ctx, "+switch-master")
	defer switched.Close()
	if _, err := switched.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := sentinel.GetMasterAddrByName(ctx, master).Result()
	if err != nil {
		t.Fatal(err)
	}
	stores := [2]*store.Redis{tg.Store(t), tg.Store(t)}
	toks := issued(t, stores[0], "bob", 20)

	c := startChurn(stores, "alice", 4)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	resume := freeze(t, net.JoinHostPort(before[0], before[1]))
	select {
	case msg := <-switched.Channel():
		t.Logf("%s", msg.Payload)
	case <-time.After(30 * time.Second):
		resume()
		c.finish(t)
		t.Fatal("Sentinel did not fail over within 30 s")
	}
	switchedAt := time.Since(start)
	resume()
	settled := c.settle(2*time.Second, 30*time.Second)
	failed, ops := c.finish(t)
	first, last := window(failed, start)
	t.Logf("primary %s frozen; Sentinel switched after %v; %d operations, %d failed, from %v to %v after the freeze",
		net.JoinHostPort(before[0], before[1]), switchedAt.Round(time.Millisecond), ops, len(failed), first.Round(time.Millisecond), last.Round(time.Millisecond))
	if !settled {
		t.Fatalf("operations still failed 30 s after the switch")
	}
	redeemOnce(t, stores[1], stores[0], "bob", toks)
}

// sentinelOf returns a client of the target's first sentinel and the name
// of the primary it watches.
func sentinelOf(t *testing.T, tg *storetest.Target) (*redis.SentinelClient, string) {
	t.Helper()
	e, err := store.ParseURL(tg.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(tg.URL)
	s := redis.NewSentinelClient(&redis.Options{Addr: e.Addrs()[0]})
	t.Cleanup(func() { _ = s.Close() })
	return s, u.Query().Get("master_name")
}

// freeze stops the redis-server at addr, a process of this machine, with
// SIGSTOP, and returns what resumes it (once).
func freeze(t *testing.T, addr string) (resume func()) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(info, "process_id:")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("no process_id in INFO: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Skipf("cannot stop the primary's process %d (not on this machine?): %v", pid, err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}

// TestClusterReshardingNeverConfirmsTwice moves the slot of a principal's
// keys to another Cluster node, key by key (MIGRATING/IMPORTING, so calls
// meet ASK and then MOVED), under a load of tokens issued on one replica
// and spent on another: every token confirms at most once, the tokens
// issued before the move each confirm exactly once after it, and no
// operation fails once the slot has its new owner.
func TestClusterReshardingNeverConfirmsTwice(t *testing.T) {
	tg := storetest.New(t)
	if tg.Kind != storetest.KindCluster {
		t.Skipf("needs a Redis Cluster (BULWARK_TEST_REDIS_CLUSTER; scripts/test starts one), not %s", tg.Kind)
	}
	ctx := context.Background()
	cc := tg.NewClient(t).(*redis.ClusterClient)
	slot := int(cc.ClusterKeySlot(ctx, "{"+store.TagForTest("alice")+"}").Val())
	stores := [2]*store.Redis{tg.Store(t), tg.Store(t)}
	toks := issued(t, stores[0], "bob", 20)

	c := startChurn(stores, "alice", 4)
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	from, to := moveSlot(t, cc, slot, "")
	moved := time.Since(start)
	settled := c.settle(time.Second, 10*time.Second)
	failed, ops := c.finish(t)
	first, last := window(failed, start)
	t.Logf("slot %d moved from %s to %s in %v; %d operations, %d failed, from %v to %v after the move began", slot, from, to,
		moved.Round(time.Millisecond), ops, len(failed), first.Round(time.Millisecond), last.Round(time.Millisecond))
	if !settled || last > moved+time.Second {
		t.Errorf("operations failed after the slot had its new owner")
	}
	redeemOnce(t, stores[1], stores[0], "bob", toks)
	moveSlot(t, cc, slot, from)
}

// moveSlot migrates slot from its owner to the node at dest (another
// primary when ""), key by key, and returns both addresses.
func moveSlot(t *testing.T, cc *redis.ClusterClient, slot int, dest string) (from, to string) {
	t.Helper()
	ctx := context.Background()
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var src, dst redis.ClusterNode
	for _, r := range slots {
		if slot >= r.Start && slot <= r.End {
			src = r.Nodes[0]
		}
	}
	for _, r := range slots {
		if n := r.Nodes[0]; n.Addr != src.Addr && (dest == "" || n.Addr == dest) {
			dst = n
		}
	}
	if src.ID == "" || dst.ID == "" {
		t.Fatalf("slot %d: no source or destination in %+v", slot, slots)
	}
	s := redis.NewClient(&redis.Options{Addr: src.Addr})
	d := redis.NewClient(&redis.Options{Addr: dst.Addr})
	defer s.Close()
	defer d.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.Do(ctx, "cluster", "setslot", slot, "importing", src.ID).Err())
	must(s.Do(ctx, "cluster", "setslot", slot, "migrating", dst.ID).Err())
	host, port, _ := net.SplitHostPort(dst.Addr)
	for {
		keys, err := s.ClusterGetKeysInSlot(ctx, slot, 10).Result()
		must(err)
		if len(keys) == 0 {
			break
		}
		for _, k := range keys {
			must(s.Migrate(ctx, host, port, k, 0, 5*time.Second).Err())
			time.Sleep(5 * time.Millisecond) // calls meet a half-moved slot
		}
	}
	for _, r := range slots {
		n := redis.NewClient(&redis.Options{Addr: r.Nodes[0].Addr})
		must(n.Do(ctx, "cluster", "setslot", slot, "node", dst.ID).Err())
		n.Close()
	}
	return src.Addr, dst.Addr
}
