package vdb

import (
	"strconv"
	"testing"
	"time"
)

// TestGrantShareFreedOnExpiry: a principal's share of the grant table is
// freed when its grants expire, and its count follows the table.
func TestGrantShareFreedOnExpiry(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	g := newGrants(func() time.Time { return now })
	for i := range maxGrantsPerPrincipal {
		if _, err := g.state("a", "dc-"+strconv.Itoa(i), time.Second, now, now.Add(time.Minute)); err != nil {
			t.Fatalf("grant %d: %v", i, err)
		}
	}
	if _, err := g.state("a", "dc-next", time.Second, now, now.Add(time.Minute)); err == nil {
		t.Fatal("a grant past the share was accepted")
	}
	if _, err := g.state("b", "dc-b", time.Second, now, now.Add(time.Minute)); err != nil {
		t.Fatalf("another principal: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := g.state("a", "dc-next", time.Second, now, now.Add(time.Minute)); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if g.per["a"] != 1 || g.per["b"] != 0 || len(g.m) != 1 {
		t.Fatalf("counts after expiry: %v, %d states", g.per, len(g.m))
	}
}
