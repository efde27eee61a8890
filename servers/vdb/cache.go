package vdb

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cache bounds and lifetimes.
const (
	DefaultCacheEntries = 1024
	DefaultCacheBytes   = 64 << 20
	// DefaultCacheTTL is how long an answer without a max-age is kept.
	DefaultCacheTTL = 5 * time.Minute
	maxCacheTTL     = time.Hour
)

// cache holds upstream answers per principal and credential: a key is a
// digest of both and of the request, so two principals (or two keys of one
// principal) never see each other's answers. It is bounded in entries and
// bytes, evicting the least recently used, and honours Cache-Control.
type cache struct {
	mu         sync.Mutex
	entries    map[string]*list.Element
	lru        *list.List
	bytes      int64
	maxEntries int
	maxBytes   int64
	now        func() time.Time
}

type cacheEntry struct {
	key     string
	f       fetched
	expires time.Time
	size    int64
}

func newCache(entries int, bytes int64, now func() time.Time) *cache {
	if entries == 0 {
		entries = DefaultCacheEntries
	}
	if bytes <= 0 {
		bytes = DefaultCacheBytes
	}
	return &cache{entries: map[string]*list.Element{}, lru: list.New(), maxEntries: entries, maxBytes: bytes, now: now}
}

// cacheKey binds an entry to the principal, the credential and the request.
func cacheKey(principal, credID, request string) string {
	h := sha256.New()
	for _, p := range []string{principal, credID, request} {
		h.Write([]byte(strconv.Itoa(len(p)) + ":" + p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *cache) get(key string) (*fetched, bool) {
	if c.maxEntries < 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.lru.MoveToFront(el)
	f := e.f
	f.cached = true
	return &f, true
}

// ttl is the lifetime the answer's headers allow; 0 means do not keep it.
// Every Cache-Control line counts (a proxy may add its own), and the
// strictest directive wins: no-store or no-cache anywhere, or an unreadable
// max-age, keeps nothing; several max-ages keep the shortest.
func ttl(h http.Header) time.Duration {
	d := time.Duration(-1) // no max-age yet
	for _, line := range h.Values("Cache-Control") {
		for _, dir := range strings.Split(strings.ToLower(line), ",") {
			dir = strings.TrimSpace(dir)
			switch {
			case dir == "no-store" || dir == "no-cache":
				return 0
			case strings.HasPrefix(dir, "max-age="):
				n, err := strconv.Atoi(strings.TrimPrefix(dir, "max-age="))
				if err != nil || n <= 0 {
					return 0
				}
				if age := min(time.Duration(n)*time.Second, maxCacheTTL); d < 0 || age < d {
					d = age
				}
			}
		}
	}
	if d < 0 {
		return DefaultCacheTTL
	}
	return d
}

func (c *cache) put(key string, f *fetched, h http.Header) {
	d := ttl(h)
	size := int64(len(f.body)) + int64(len(key))
	if c.maxEntries < 0 || d == 0 || size > c.maxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	e := &cacheEntry{key: key, f: fetched{body: f.body, header: f.header}, expires: c.now().Add(d), size: size}
	c.entries[key] = c.lru.PushFront(e)
	c.bytes += size
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.lru.Back())
	}
}

func (c *cache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.bytes -= e.size
}

// len reports the number of entries and their bytes.
func (c *cache) len() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.bytes
}
