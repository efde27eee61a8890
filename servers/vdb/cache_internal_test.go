package vdb

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestCacheBounded: the cache never holds more entries or bytes than its
// bounds, evicting the least recently used, and honours max-age.
func TestCacheBounded(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCache(3, 10_000, func() time.Time { return now })
	h := http.Header{"Cache-Control": {"private, max-age=60"}}
	for i := range 10 {
		c.put(strconv.Itoa(i), &fetched{body: make([]byte, 100)}, h)
	}
	if n, b := c.len(); n != 3 || b > 10_000 {
		t.Fatalf("%d entries, %d bytes", n, b)
	}
	if _, ok := c.get("9"); !ok {
		t.Fatal("the newest entry was evicted")
	}
	c.put("big", &fetched{body: make([]byte, 2_000)}, h)
	c.put("big2", &fetched{body: make([]byte, 2_400)}, h)
	if _, b := c.len(); b > 10_000 {
		t.Fatalf("%d bytes", b)
	}
	c.put("huge", &fetched{body: make([]byte, 5_000)}, h) // over a quarter of the bound: not kept
	if _, ok := c.get("huge"); ok {
		t.Fatal("an entry over a quarter of the byte bound was kept")
	}
	now = now.Add(61 * time.Second)
	if _, ok := c.get("9"); ok {
		t.Fatal("an expired entry was served")
	}
	for _, cc := range []string{"no-store", "private, no-cache", "max-age=0"} {
		if ttl(http.Header{"Cache-Control": {cc}}) != 0 {
			t.Errorf("%q is cached", cc)
		}
	}
}

// TestTTL: one row per Cache-Control case; every line counts and the
// strictest wins.
func TestTTL(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  time.Duration
	}{
		{nil, DefaultCacheTTL},
		{[]string{"private"}, DefaultCacheTTL},
		{[]string{"public, max-age=3600"}, time.Hour},
		{[]string{"max-age=86400"}, maxCacheTTL},
		{[]string{"max-age=300", "no-store"}, 0},
		{[]string{"no-cache", "max-age=300"}, 0},
		{[]string{"max-age=3600", "max-age=10"}, 10 * time.Second},
		{[]string{"max-age=10, max-age=3600"}, 10 * time.Second},
		{[]string{"max-age=300", "max-age=bogus"}, 0},
		{[]string{"max-age=0"}, 0},
		{[]string{"MAX-AGE=60", "Private"}, time.Minute},
	} {
		h := http.Header{}
		for _, l := range tc.lines {
			h.Add("Cache-Control", l)
		}
		if got := ttl(h); got != tc.want {
			t.Errorf("ttl(%q) = %v, want %v", tc.lines, got, tc.want)
		}
	}
}
