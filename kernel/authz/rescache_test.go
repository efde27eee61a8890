package authz

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func buildTestResource(s string, n int64) Resource {
	z := strings.ToLower(s)
	return Resource{Type: "Dns::Zone", ID: z, Attrs: map[string]any{"zone": z, "id": strconv.FormatInt(n, 10), "nameLabels": strings.Split(z, ".")}}
}

// TestResourceCacheNeverStale: over many more keys than slots, so that
// keys collide and evict each other, with keys that differ only in the
// number, only in case, or only in the last byte, every answer is what
// build makes of that very key; a repeated key is answered from the cache.
func TestResourceCacheNeverStale(t *testing.T) {
	var c ResourceCache
	builds := 0
	build := func(s string, n int64) Resource { builds++; return buildTestResource(s, n) }
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a.example", "A.example", "a.exampl", "a.examplf", ""}
	for i := range 4 * resourceSlots {
		names = append(names, "z"+strconv.Itoa(i)+".example")
	}
	for i := range 20000 {
		s, n := names[rng.IntN(len(names))], int64(rng.IntN(3))
		got, want := c.Get(s, n, build), buildTestResource(s, n)
		if got.ID != want.ID || got.Attrs["id"] != want.Attrs["id"] || got.Attrs["zone"] != want.Attrs["zone"] {
			t.Fatalf("request %d (%q, %d): got %+v, want %+v", i, s, n, got, want)
		}
	}
	before := builds
	for range 10 {
		c.Get("hit.example", 7, build)
	}
	if builds != before+1 {
		t.Fatalf("a repeated key was built %d times", builds-before)
	}
}

// TestResourceCacheBounded: the table never holds more than its slots,
// a key longer than maxResourceKey is built every time and never stored,
// and a stored key is a copy, not a view of the caller's buffer.
func TestResourceCacheBounded(t *testing.T) {
	var c ResourceCache
	builds := 0
	build := func(s string, n int64) Resource { builds++; return Resource{ID: s} }
	long := strings.Repeat("x", maxResourceKey+1)
	for range 3 {
		if c.Get(long, 0, build).ID != long {
			t.Fatal("wrong resource for a long key")
		}
	}
	if builds != 3 {
		t.Fatalf("a long key was built %d times in 3 calls: it was stored", builds)
	}
	for i := range 10 * resourceSlots {
		c.Get(strconv.Itoa(i), 0, build)
	}
	held := 0
	for i := range c.slots {
		if e := c.slots[i].Load(); e != nil {
			held++
			if len(e.s) > maxResourceKey {
				t.Fatal("a long key was stored")
			}
		}
	}
	if held > resourceSlots {
		t.Fatalf("%d entries held", held)
	}
	buf := []byte("buf.example") // a key that is a view of a request's buffer
	view := unsafe.String(&buf[0], 3)
	c = ResourceCache{}
	c.Get(view, 9, build)
	for i := range c.slots {
		if e := c.slots[i].Load(); e != nil && unsafe.StringData(e.s) == &buf[0] {
			t.Fatal("the cache keeps the caller's buffer alive")
		}
	}
}

// TestResourceCacheConcurrent: concurrent lookups and inserts (run with
// -race) answer every key with its own resource.
func TestResourceCacheConcurrent(t *testing.T) {
	var c ResourceCache
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				s := "z" + strconv.Itoa((i*7+g)%600) + ".Example"
				if r := c.Get(s, int64(g), buildTestResource); r.ID != strings.ToLower(s) || r.Attrs["id"] != strconv.Itoa(g) {
					t.Errorf("(%q, %d): %+v", s, g, r)
					return
				}
			}
		})
	}
	wg.Wait()
}
