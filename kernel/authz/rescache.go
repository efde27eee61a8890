package authz

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// ResourceCache remembers the Resources a target resolver builds with a
// pure function of a string and a number (a zone's name and id, a pad's
// id): lower-casing, splitting labels and filling the attribute map once
// per target instead of on every call. The zero value is ready to use and
// safe for concurrent use.
//
// It is a fixed table of resourceSlots slots indexed by a seeded hash: a
// lookup is a hash and a comparison of the whole key, an insert replaces
// the slot's entry, nothing grows, and keys longer than maxResourceKey
// bytes are built every time, never stored. A key is only ever answered
// with what build made of that same key.
//
// The Resources it returns are shared: their Attrs (and slices in them)
// must not be changed, which neither the kernel nor Decide does; a
// resolver that wants other attributes builds a new map.
type ResourceCache struct {
	slots [resourceSlots]atomic.Pointer[resourceEntry]
}

const (
	resourceSlots  = 256
	maxResourceKey = 256
)

type resourceEntry struct {
	s   string
	n   int64
	res Resource
}

var resourceSeed = maphash.MakeSeed()

// Get returns build(s, n), from the cache when it holds that key. build
// must be a pure function of its arguments.
func (c *ResourceCache) Get(s string, n int64, build func(string, int64) Resource) Resource {
	if len(s) > maxResourceKey {
		return build(s, n)
	}
	slot := &c.slots[(maphash.String(resourceSeed, s)^uint64(n)*0x9e3779b97f4a7c15)%resourceSlots]
	if e := slot.Load(); e != nil && e.s == s && e.n == n {
		return e.res
	}
	e := &resourceEntry{s: strings.Clone(s), n: n, res: build(s, n)} // not a view of a request's buffer
	slot.Store(e)
	return e.res
}
