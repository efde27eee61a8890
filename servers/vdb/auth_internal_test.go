package vdb

import (
	"strconv"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// grantStores are the GrantStores under test: in process, and on the
// test's Redis (storetest: a real Redis, Cluster or Sentinel when the
// environment names one, else miniredis), under the test's key prefix.
func grantStores(t *testing.T, now *time.Time) map[string]GrantStore {
	tg := storetest.New(t)
	r := NewRedisGrants(tg.NewClient(t))
	r.prefix = tg.Prefix + "grant:"
	return map[string]GrantStore{"memory": newMemoryGrants(func() time.Time { return *now }), "redis": r}
}

// TestGrantShareFreedOnExpiry: a principal's share of the grant table is
// freed when its grants expire, and its count follows the table.
func TestGrantShareFreedOnExpiry(t *testing.T) {
	now := time.Now().Truncate(time.Millisecond)
	for name, g := range grantStores(t, &now) {
		t.Run(name, func(t *testing.T) {
			start := now
			poll := func(p, dc string) error {
				_, err := g.Poll(p, dc, GrantPoll{Now: now, Issued: now, Expires: now.Add(time.Minute), Interval: time.Second})
				return err
			}
			for i := range maxGrantsPerPrincipal {
				if err := poll("a", "dc-"+strconv.Itoa(i)); err != nil {
					t.Fatalf("grant %d: %v", i, err)
				}
			}
			if err := poll("a", "dc-next"); err == nil {
				t.Fatal("a grant past the share was accepted")
			}
			if err := poll("b", "dc-b"); err != nil {
				t.Fatalf("another principal: %v", err)
			}
			now = now.Add(2 * time.Minute)
			defer func() { now = start }()
			if err := poll("a", "dc-next"); err != nil {
				t.Fatalf("after expiry: %v", err)
			}
			if m, ok := g.(*memoryGrants); ok && (m.per["a"] != 1 || m.per["b"] != 0 || len(m.m) != 1) {
				t.Fatalf("counts after expiry: %v, %d states", m.per, len(m.m))
			}
		})
	}
}

// TestGrantPacing: the first call is allowed one interval after issue;
// a claim moves the next one interval on; slow_down adds its step (to the
// most); an ended grant stays ended.
func TestGrantPacing(t *testing.T) {
	base := time.Now().Truncate(time.Millisecond)
	now := base
	for name, g := range grantStores(t, &now) {
		t.Run(name, func(t *testing.T) {
			poll := func(at time.Time) GrantClaim {
				c, err := g.Poll("p", "dc-"+name, GrantPoll{Now: at, Issued: base, Expires: base.Add(10 * time.Minute), Interval: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			if c := poll(base.Add(time.Second)); c.Wait != 4*time.Second || c.Done {
				t.Fatalf("early: %+v", c)
			}
			if c := poll(base.Add(5 * time.Second)); c.Wait != 0 || c.Done || c.Interval != 5*time.Second {
				t.Fatalf("due: %+v", c)
			}
			if c := poll(base.Add(6 * time.Second)); c.Wait != 4*time.Second {
				t.Fatalf("claimed twice: %+v", c)
			}
			iv, err := g.SlowDown("p", "dc-"+name, base.Add(10*time.Second))
			if err != nil || iv != 10*time.Second {
				t.Fatalf("slow_down: %v %v", iv, err)
			}
			for range 20 {
				iv, _ = g.SlowDown("p", "dc-"+name, base.Add(10*time.Second))
			}
			if iv != maxInterval {
				t.Fatalf("interval %v past the most", iv)
			}
			if c := poll(base.Add(time.Hour)); c.Wait != 0 {
				t.Fatalf("after the interval: %+v", c)
			}
			if err := g.End("p", "dc-"+name); err != nil {
				t.Fatal(err)
			}
			if c := poll(base.Add(2 * time.Hour)); !c.Done {
				t.Fatalf("an ended grant polled: %+v", c)
			}
		})
	}
}
