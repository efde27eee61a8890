package localzone

import (
	"container/list"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultCacheBytes is the default bound of the parsed-zone cache: the
// estimated memory of every parsed zone file and sidecar it keeps.
const DefaultCacheBytes = 64 << 20

// zoneCache keeps the parsed files of the zones used last, so that a read
// does not parse a zone file again while it is unchanged.
//
// A zone's zone file and sidecar are cached apart, each under the statKey
// (device, inode, size, nanosecond modification and change times) of the
// version it was read from; a read stats both files and uses a cached
// version only when its key is the file's key now. So an edit in place, a
// rename over the file, a restore of another version and a deletion are
// all seen by the next read, from this process or another one.
//
// The cache is bounded by max, the estimated bytes of what it holds (see
// zoneData.memSize); the least recently used zones go first, and a zone
// costing more than max on its own is not kept. Cached values are never
// changed: reads share them, and mutations work on clones.
type zoneCache struct {
	mu    sync.Mutex
	max   int64
	total int64
	lru   list.List // of *cacheItem, the most recently used at the front
	items map[string]*list.Element
}

// cacheItem is one zone's cached files. Either part may be nil.
type cacheItem struct {
	name string
	zone *zoneVersion
	meta *metaVersion
}

// itemOverhead is charged per cached zone for the item, its list element
// and its map entry.
const itemOverhead = 256

func (it *cacheItem) cost() int64 {
	n := int64(itemOverhead)
	if it.zone != nil {
		n += it.zone.cost
	}
	if it.meta != nil {
		n += it.meta.cost
	}
	return n
}

// zoneVersion is one version of a zone file as parsed: its records, or the
// reason it was refused (a *syntaxError: it does not parse, breaks a
// structural rule, or is over the budget). A refused file keeps no records.
type zoneVersion struct {
	key  statKey
	data *zoneData
	err  error
	cost int64
}

// metaVersion is one version of a sidecar as decoded.
type metaVersion struct {
	key  statKey
	meta *sidecar
	cost int64
}

func newZoneCache(max int64) *zoneCache {
	return &zoneCache{max: max, items: map[string]*list.Element{}}
}

// zone returns the cached version of name's zone file with key.
func (c *zoneCache) zone(name string, key statKey) (*zoneVersion, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.touch(name)
	if it == nil || it.zone == nil || it.zone.key != key {
		return nil, false
	}
	return it.zone, true
}

// meta returns the cached version of name's sidecar with key.
func (c *zoneCache) meta(name string, key statKey) (*metaVersion, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.touch(name)
	if it == nil || it.meta == nil || it.meta.key != key {
		return nil, false
	}
	return it.meta, true
}

// touch returns name's item, marking it used. The caller holds c.mu.
func (c *zoneCache) touch(name string) *cacheItem {
	el := c.items[name]
	if el == nil {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cacheItem)
}

// putZone caches v as name's zone file.
func (c *zoneCache) putZone(name string, v *zoneVersion) {
	c.put(name, func(it *cacheItem) { it.zone = v })
}

// putMeta caches v as name's sidecar.
func (c *zoneCache) putMeta(name string, v *metaVersion) {
	c.put(name, func(it *cacheItem) { it.meta = v })
}

// put changes name's item with set, then evicts the least recently used
// items until the cache is within its bound. An item over the bound on its
// own is dropped.
func (c *zoneCache) put(name string, set func(*cacheItem)) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.items[name]
	if el == nil {
		el = c.lru.PushFront(&cacheItem{name: name})
		c.items[name] = el
	} else {
		c.total -= el.Value.(*cacheItem).cost()
		c.lru.MoveToFront(el)
	}
	it := el.Value.(*cacheItem)
	set(it)
	if it.cost() > c.max {
		c.remove(el)
		return
	}
	c.total += it.cost()
	for c.total > c.max {
		back := c.lru.Back()
		c.total -= back.Value.(*cacheItem).cost()
		c.remove(back)
	}
}

// drop forgets name (its files were removed).
func (c *zoneCache) drop(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.items[name]; el != nil {
		c.total -= el.Value.(*cacheItem).cost()
		c.remove(el)
	}
}

// remove takes el out of the list and the map; the caller has taken its
// cost out of total, or never added it.
func (c *zoneCache) remove(el *list.Element) {
	it := c.lru.Remove(el).(*cacheItem)
	delete(c.items, it.name)
}

// usage reports how many zones the cache holds and their estimated bytes.
func (c *zoneCache) usage() (zones int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.total
}

// Estimated memory of parsed data, per item, measured on amd64 with
// TestCacheEstimateCoversHeap: an RRSet costs its struct, its map entry
// and key, and its place in every sort order; a record its struct and the
// text it was parsed from (miekg/dns prints the whole record and the value
// is a suffix of it).
const (
	zoneOverhead   = 512
	setOverhead    = 160 + 8*numOrders
	recordOverhead = 48
	// sidecarFactor bounds the decoded size of a sidecar per byte of its
	// JSON (measured: about 1, but up to about 2 for a sidecar of many small
	// label maps under -race, where TestCacheEstimateCoversHeap once saw the
	// heap grow past an estimate made with 2).
	sidecarFactor = 3
)

// memSize estimates the memory z holds once cached.
func (z *zoneData) memSize() int64 {
	n := int64(zoneOverhead + len(z.name))
	for k, s := range z.sets {
		n += int64(setOverhead + 2*len(k))
		for _, r := range s.records {
			n += int64(recordOverhead + len(r.value) + len(r.comment) + len(s.name) + len(s.typ) + 16)
		}
	}
	return n
}

// order is one way ListRRSets sorts: by id, or by name and then id, each
// ascending or descending. Every sort the API accepts is one of them (the
// id is unique, so keys after it change nothing).
type order uint8

const (
	orderByName order = 1 << iota
	orderNameDesc
	orderIDDesc
	numOrders = 8
)

// orderOf reads sort keys ("id", "name", each maybe descending) as an
// order; the tie-breaker is the id, ascending.
func orderOf(keys []sortKey) order {
	var o order
	for _, k := range keys {
		if k.field == "id" {
			if k.desc {
				o |= orderIDDesc
			}
			return o
		}
		if o&orderByName == 0 {
			o |= orderByName
			if k.desc {
				o |= orderNameDesc
			}
		}
	}
	return o
}

func (o order) compare(a, b *rrset) int {
	if o&orderByName != 0 {
		c := strings.Compare(a.name, b.name)
		if o&orderNameDesc != 0 {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	c := strings.Compare(a.key(), b.key())
	if o&orderIDDesc != 0 {
		c = -c
	}
	return c
}

// setOrders holds a cached zone's RRSets sorted each way ListRRSets can
// ask, each sorted once, when first asked for.
type setOrders struct {
	once [numOrders]sync.Once
	sets [numOrders][]*rrset
}

// ordered returns z's RRSets sorted by o. For a cached zone the slice is
// shared and must not be changed.
func (z *zoneData) ordered(o order) []*rrset {
	if z.orders == nil {
		return z.sortSets(o)
	}
	z.orders.once[o].Do(func() { z.orders.sets[o] = z.sortSets(o) })
	return z.orders.sets[o]
}

// sorts counts the sorts of RRSets, for tests that check a cached zone is
// sorted once per order.
var sorts atomic.Int64

func (z *zoneData) sortSets(o order) []*rrset {
	sorts.Add(1)
	sets := make([]*rrset, 0, len(z.sets))
	for _, s := range z.sets {
		sets = append(sets, s)
	}
	slices.SortFunc(sets, o.compare)
	return sets
}
