package localzone

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// TestCachedLoadParsesWithoutStoreLock: while a read parses a large zone
// file that is not cached, other reads and writes go on (they hold the
// store's locks; the parse holds none), and the parse ends with its
// caller's context, leaving nothing in the cache.
func TestCachedLoadParsesWithoutStoreLock(t *testing.T) {
	p, _ := newTestProvider(t, "")
	zoneOnDisk(t, p, "heavy.test", heavyText("heavy.test"))
	mustZone(t, p, "other.test")
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	start := zonefile.Parsed()
	done := make(chan error, 1)
	go func() { done <- second(p.GetZone(ctx, "heavy.test")) }()
	waitParsing(t, start, done)
	t0 := time.Now()
	if _, err := p.AddRecords(bg, "other.test", "www", "A", recs("192.0.2.1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetRRSet(bg, "other.test", "www", "A"); err != nil {
		t.Fatal(err)
	}
	latency := time.Since(t0)
	select {
	case err := <-done:
		t.Fatalf("the parse ended (%v) before the other calls could show they were not blocked", err)
	default:
	}
	t.Logf("a write and a read during the parse: %v (parsed %d records so far)", latency, zonefile.Parsed()-start)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	stopped := zonefile.Parsed()
	time.Sleep(20 * time.Millisecond)
	if zonefile.Parsed() != stopped {
		t.Error("the parse went on after its caller left")
	}
	fi, _ := os.Stat(filepath.Join(p.Dir(), zoneFile("heavy.test")))
	if _, ok := p.store.cache.zone("heavy.test", keyOf(fi)); ok {
		t.Error("a cancelled parse was cached")
	}
}

// TestRefusedFileNotCachedAsPartial: a hostile file on disk is refused
// before it is parsed, its refusal is cached (so the next call does not
// scan it again) and no records are; a file breaking a structural rule
// keeps no records either and is listed with status error.
func TestRefusedFileNotCachedAsPartial(t *testing.T) {
	p, _ := newTestProvider(t, "")
	zoneOnDisk(t, p, "hostile.test", hostileText("hostile.test"))
	noSOA := "$ORIGIN nosoa.test.\n@ 3600 IN NS localhost.\nwww 3600 IN A 192.0.2.1\n"
	zoneOnDisk(t, p, "nosoa.test", noSOA)
	before := zonefile.Parsed()
	for range 3 {
		wantCode(t, second(p.GetZone(bg, "hostile.test")), 422, CodeInvalidZonefile)
		wantCode(t, second(p.ListRRSets(bg, "hostile.test", dns.ListRRSetsOptions{})), 422, CodeInvalidZonefile)
		wantCode(t, second(p.GetZone(bg, "nosoa.test")), 422, CodeInvalidZonefile)
	}
	if n := zonefile.Parsed() - before; n > 8 {
		t.Errorf("%d records parsed: refused files must be refused before parsing, once", n)
	}
	for _, z := range []string{"hostile.test", "nosoa.test"} {
		fi, _ := os.Stat(filepath.Join(p.Dir(), zoneFile(z)))
		v, ok := p.store.cache.zone(z, keyOf(fi))
		if !ok || v.data != nil || !isSyntax(v.err) {
			t.Errorf("%s cached as %+v (ok %v), want its refusal and no records", z, v, ok)
		}
	}
	l, err := p.ListZones(bg, dns.ListZonesOptions{})
	if err != nil || len(l.Zones) != 2 {
		t.Fatalf("ListZones = %+v, %v", l, err)
	}
	for _, z := range l.Zones {
		if z.Status != "error" || z.RecordCount != 0 {
			t.Errorf("%s listed with status %s and %d records", z.Name, z.Status, z.RecordCount)
		}
	}
}

// TestCacheBudget: reading many large zones keeps the cache within its
// bound, the least recently used zones going first, and the heap grows by
// no more than the bound; a zone larger than the bound is not kept at all.
func TestCacheBudget(t *testing.T) {
	const bound = 4 << 20
	dir := t.TempDir()
	p, err := New(dir, &Options{DisableSync: true, CacheBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	const zones, records = 6, 4000
	for i := range zones {
		zoneOnDisk(t, p, fmt.Sprintf("z%d.test", i), zoneText(fmt.Sprintf("z%d.test", i), records, i))
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	h0 := heap()
	for i := range zones {
		if _, err := p.GetZone(bg, fmt.Sprintf("z%d.test", i)); err != nil {
			t.Fatal(err)
		}
	}
	grown := int64(heap()) - int64(h0)
	n, used := p.store.cache.usage()
	one := int64(0)
	if v, ok := p.store.cache.items["z5.test"]; ok {
		one = v.Value.(*cacheItem).cost()
	}
	t.Logf("%d zones of %d records read: %d cached, %d bytes estimated (one zone: %d), heap grew %d bytes; bound %d",
		zones, records, n, used, one, grown, bound)
	if used > bound || n >= zones || n == 0 {
		t.Errorf("cache holds %d zones, %d bytes; bound %d", n, used, bound)
	}
	if int64(zones)*one <= bound {
		t.Fatalf("the zones (%d bytes each) fit the bound: the test proves nothing", one)
	}
	if grown > bound+bound/4 {
		t.Errorf("heap grew by %d bytes reading %d zones; the cache's bound is %d", grown, zones, bound)
	}
	if _, ok := p.store.cache.items["z0.test"]; ok {
		t.Error("the least recently used zone is still cached")
	}
	// One zone over the bound on its own is parsed on every call, not kept.
	zoneOnDisk(t, p, "big.test", zoneText("big.test", 14000, 1))
	if _, err := p.GetZone(bg, "big.test"); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.store.cache.items["big.test"]; ok {
		t.Error("a zone over the bound was cached")
	}
	if _, used := p.store.cache.usage(); used > bound {
		t.Errorf("cache holds %d bytes, bound %d", used, bound)
	}
}

// TestCacheEstimateCoversHeap: the estimate the bound is charged with is
// at least what a cached zone costs the heap: many A records, many TXT
// records, and a sidecar full of labels and actions.
func TestCacheEstimateCoversHeap(t *testing.T) {
	p, _ := newTestProvider(t, "")
	for _, tc := range []struct {
		zone, text string
		bigMeta    bool
	}{
		{"a.test", zoneText("a.test", 10000, 1), false},
		{"txt.test", largestText("txt.test")[:strings.LastIndexByte(largestText("txt.test")[:1<<18], '\n')+1], false},
		{"meta.test", zoneText("meta.test", 2000, 1), true},
	} {
		zoneOnDisk(t, p, tc.zone, tc.text)
		if tc.bigMeta {
			m, _, err := p.store.decodeMeta(tc.zone)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2000 {
				m.rrsetMeta(fmt.Sprintf("host%05d/A", i), true).Labels = map[string]string{"env": "prod", "team": fmt.Sprint("t", i), "tier": "1"}
			}
			a := m.Actions[0]
			for i := range DefaultHistoryLimit {
				a.ID = int64(i + 10)
				m.record(a, DefaultHistoryLimit)
			}
			if err := writeJSON(p.Dir(), sidecarFile(tc.zone), m, true); err != nil {
				t.Fatal(err)
			}
		}
		p.store.cache.drop(tc.zone)
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := p.GetZone(bg, tc.zone); err != nil {
			t.Fatal(err)
		}
		e, _ := p.entry(bg, tc.zone)
		for o := range order(numOrders) {
			e.data.ordered(o)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		est := p.store.cache.items[tc.zone].Value.(*cacheItem).cost()
		grown := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
		t.Logf("%s: %d records, %d sidecar entries, heap grew %d bytes, estimate %d (%.2f×)",
			tc.zone, e.data.recordCount(), len(e.meta.RRSets)+len(e.meta.Actions), grown, est, float64(est)/float64(grown))
		if grown > est {
			t.Errorf("%s: the heap grew by %d bytes, more than the estimate %d", tc.zone, grown, est)
		}
		runtime.KeepAlive(e)
	}
}
