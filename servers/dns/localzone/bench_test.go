package localzone

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/kernel/memory"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// Benchmarks. Run them with
//
//	go test -run '^$' -bench . -benchtime 3s ./servers/dns/localzone
//
// BenchmarkListRRSetsPage compares list_rrsets page 1 with a full export
// of a 5,000-record zone, call by call, with the cache and without it.
//
// BenchmarkQueries/ratio interleaves the responder (a 10,000-record zone,
// random names) with a bare miekg/dns server answering one fixed record,
// each client alternating between the two, and reports local/bare
// throughput as ratio-%.

const benchRecords = 10_000

// bigZoneText is a zone file with n A records besides the SOA and NS.
func bigZoneText(n int) string {
	var b strings.Builder
	b.WriteString("$ORIGIN bench.test.\n$TTL 3600\n@ IN SOA localhost. hostmaster.bench.test. 1 86400 10800 3600000 3600\n@ IN NS localhost.\n")
	for i := range n {
		fmt.Fprintf(&b, "host%05d IN A 10.%d.%d.%d ; record %d\n", i, i>>16&255, i>>8&255, i&255, i)
	}
	return b.String()
}

func bigProvider(b *testing.B) *Provider {
	b.Helper()
	p, _ := newTestProvider(b, "")
	mustZone(b, p, "bench.test")
	if _, err := p.ImportZonefile(bg, "bench.test", bigZoneText(benchRecords)); err != nil {
		b.Fatal(err)
	}
	return p
}

func benchNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("host%05d.bench.test.", (i*7919)%benchRecords)
	}
	return names
}

// BenchmarkImport10k imports a 10,000-record zone file (parse, validate,
// render, write; fsync disabled to measure the CPU path).
func BenchmarkImport10k(b *testing.B) {
	p, _ := newTestProvider(b, "")
	mustZone(b, p, "bench.test")
	text := bigZoneText(benchRecords)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.ImportZonefile(bg, "bench.test", text); err != nil {
			b.Fatal(err)
		}
	}
}

// startBare runs a bare miekg/dns UDP server answering one fixed A record.
func startBare(b *testing.B) string {
	b.Helper()
	fixed, _ := mdns.NewRR("fixed.test. 3600 IN A 192.0.2.1")
	answer := []mdns.RR{fixed}
	started := make(chan struct{})
	srv := &mdns.Server{Addr: "127.0.0.1:0", Net: "udp", NotifyStartedFunc: func() { close(started) },
		Handler: mdns.HandlerFunc(func(w mdns.ResponseWriter, r *mdns.Msg) {
			m := new(mdns.Msg)
			m.SetReply(r)
			m.Authoritative = true
			m.Answer = answer
			_ = w.WriteMsg(m)
		})}
	go func() { _ = srv.ListenAndServe() }()
	<-started
	b.Cleanup(func() { _ = srv.Shutdown() })
	return srv.PacketConn.LocalAddr().String()
}

type target struct {
	addr  string
	names []string
}

// exchange sends one A query for names[i] over conn.
func exchange(b *testing.B, c *mdns.Client, conn *mdns.Conn, m *mdns.Msg, name string) {
	m.SetQuestion(name, mdns.TypeA)
	in, _, err := c.ExchangeWithConn(m, conn)
	if err != nil || in.Rcode != mdns.RcodeSuccess || len(in.Answer) != 1 {
		b.Fatalf("query %s: %v %v", name, in, err)
	}
}

func BenchmarkQueries(b *testing.B) {
	p := bigProvider(b)
	r := startResponder(b, p, &ResponderOptions{DisableRateLimit: true})
	bare := target{addr: startBare(b), names: []string{"fixed.test."}}
	local := target{addr: r.Addr(), names: benchNames(4096)}
	for _, tc := range []struct {
		name string
		t    target
	}{{"bare", bare}, {"localzone", local}} {
		b.Run(tc.name, func(b *testing.B) {
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				c := &mdns.Client{Net: "udp", Timeout: 2 * time.Second}
				conn, err := c.Dial(tc.t.addr)
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				m := new(mdns.Msg)
				for i := int(n.Add(1000)); pb.Next(); i++ {
					exchange(b, c, conn, m, tc.t.names[i%len(tc.t.names)])
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
	b.Run("ratio", func(b *testing.B) {
		var bareNs, localNs, count atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			c := &mdns.Client{Net: "udp", Timeout: 2 * time.Second}
			cb, err1 := c.Dial(bare.addr)
			cl, err2 := c.Dial(local.addr)
			if err1 != nil || err2 != nil {
				b.Fatal(err1, err2)
			}
			defer cb.Close()
			defer cl.Close()
			m := new(mdns.Msg)
			var tb, tl, k int64
			for i := int(count.Add(1000)); pb.Next(); i++ {
				t0 := time.Now()
				exchange(b, c, cb, m, bare.names[0])
				t1 := time.Now()
				exchange(b, c, cl, m, local.names[i%len(local.names)])
				tb, tl, k = tb+int64(t1.Sub(t0)), tl+int64(time.Since(t1)), k+1
			}
			bareNs.Add(tb)
			localNs.Add(tl)
		})
		if localNs.Load() > 0 {
			b.ReportMetric(100*float64(bareNs.Load())/float64(localNs.Load()), "ratio-%")
		}
	})
}

// BenchmarkAnswer measures the handler alone (no sockets) on the
// 10,000-record zone, against the bare handler's work.
func BenchmarkAnswer(b *testing.B) {
	p := bigProvider(b)
	r := NewResponder(p, nil)
	s := r.refresh(true)
	names := benchNames(4096)
	reqs := make([]*mdns.Msg, len(names))
	for i, n := range names {
		reqs[i] = new(mdns.Msg)
		reqs[i].SetQuestion(n, mdns.TypeA)
	}
	fixed, _ := mdns.NewRR("fixed.test. 3600 IN A 192.0.2.1")
	answer := []mdns.RR{fixed}
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			m := new(mdns.Msg)
			m.SetReply(reqs[i%len(reqs)])
			m.Authoritative = true
			m.Answer = answer
			m.Truncate(512)
			i++
		}
	})
	b.Run("localzone", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if m := r.answer(s, reqs[i%len(reqs)], true); len(m.Answer) != 1 {
				b.Fatal(m)
			}
			i++
		}
	})
	b.Run("localzone-nxdomain", func(b *testing.B) {
		b.ReportAllocs()
		req := new(mdns.Msg)
		req.SetQuestion("nope.bench.test.", mdns.TypeA)
		for b.Loop() {
			if m := r.answer(s, req, true); m.Rcode != mdns.RcodeNameError {
				b.Fatal(m)
			}
		}
	})
}

// BenchmarkImportBudget compares, in one run, refusing the hostile
// $GENERATE file of issue 10.1 (24 lines, under 1 KB, 1.5 million records
// once expanded) with importing a legitimate 10,000-record zone, and
// reports hostile/legit as ratio-% (interleaved, like with like: the same
// provider, the same call). eight-concurrent runs eight hostile imports at
// once, and eight imports of the largest file a tool accepts (1 MiB of
// distinct records, within the budget), sampling the heap every
// millisecond under the binary's memory policy (memory.Apply:
// GOGC 200, a 256 MiB soft limit); it reports the peak heap (live objects
// and garbage not yet collected) and the peak live heap after a collection,
// against the limit.
func BenchmarkImportBudget(b *testing.B) {
	gc, limit := memory.Apply(os.Getenv)
	defer debug.SetGCPercent(100)
	defer debug.SetMemoryLimit(math.MaxInt64)
	p, _ := newTestProvider(b, "")
	mustZone(b, p, "bench.test")
	legit, hostile := bigZoneText(benchRecords), hostileText("bench.test")
	importOnce := func(text string, wantErr bool) time.Duration {
		t0 := time.Now()
		_, err := p.ImportZonefile(bg, "bench.test", text)
		if (err != nil) != wantErr {
			b.Fatalf("import: err = %v, want error %v", err, wantErr)
		}
		return time.Since(t0)
	}
	b.Run("ratio", func(b *testing.B) {
		var tl, th time.Duration
		for b.Loop() {
			tl += importOnce(legit, false)
			th += importOnce(hostile, true)
		}
		b.ReportMetric(float64(tl.Nanoseconds())/float64(b.N), "legit-ns/op")
		b.ReportMetric(float64(th.Nanoseconds())/float64(b.N), "hostile-ns/op")
		b.ReportMetric(100*float64(th)/float64(tl), "ratio-%")
	})
	for _, tc := range []struct {
		name, text string
		wantErr    bool
	}{{"eight-hostile", hostile, true}, {"eight-largest", largestText("bench.test"), false}} {
		b.Run(tc.name, func(b *testing.B) {
			var peak, live uint64
			for b.Loop() {
				h, l := peakDuring(func() {
					var wg sync.WaitGroup
					for range 8 {
						wg.Go(func() { importOnce(tc.text, tc.wantErr) })
					}
					wg.Wait()
				})
				peak, live = max(peak, h), max(live, l)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(live)/(1<<20), "peak-live-MiB")
			b.ReportMetric(float64(limit)/(1<<20), "limit-MiB")
			b.ReportMetric(float64(gc), "GOGC")
		})
	}
}

// largestText is a zone file of just under 1 MiB (the tools' limit) of
// distinct TXT records.
func largestText(zone string) string {
	var sb strings.Builder
	sb.WriteString("$ORIGIN " + zone + ".\n$TTL 3600\n@ IN SOA localhost. hostmaster.bench.test. 1 86400 10800 3600000 3600\n@ IN NS localhost.\n")
	for i := 0; sb.Len() < 1<<20-64; i++ {
		fmt.Fprintf(&sb, "t%06d IN TXT \"v%d\"\n", i, i)
	}
	return sb.String()
}

// peakDuring runs fn and returns the largest heap in use seen meanwhile,
// and the largest live heap a collection found.
func peakDuring(fn func()) (uint64, uint64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	var peak, live atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			if v := sample[1].Value.Uint64(); v > live.Load() {
				live.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	return peak.Load(), live.Load()
}

// BenchmarkListRRSetsPage: a 5,000-record zone; each iteration lists page 1
// of its RRSets (100, the largest page), the last page, and exports the
// whole zone, timing each, through one Provider. "cached" is the store as
// it is; "uncached" is the same directory read by a Provider whose cache
// holds nothing (Options.CacheBytes -1), so every call parses the zone file,
// as the first call after a change does; "previous" lists the pages as
// ListRRSets did before it sorted once per version (a view of every RRSet,
// sorted, then cut: referenceList) from the cached zone. Reported: the time
// of each call and export/page as export-per-page-x (the bound: at least 5).
func BenchmarkListRRSetsPage(b *testing.B) {
	const records = 5000
	dir := b.TempDir()
	cached, _ := newTestProvider(b, dir)
	mustZone(b, cached, "bench.test")
	if _, err := cached.ImportZonefile(bg, "bench.test", bigZoneText(records)); err != nil {
		b.Fatal(err)
	}
	uncached, err := New(dir, &Options{DisableSync: true, CacheBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	previous := func(p *Provider, opts dns.ListRRSetsOptions) (dns.RRSetList, error) {
		e, err := p.entry(bg, "bench.test")
		if err != nil {
			return dns.RRSetList{}, err
		}
		return referenceList(b, e, opts), nil
	}
	for _, tc := range []struct {
		name string
		p    *Provider
		list func(*Provider, dns.ListRRSetsOptions) (dns.RRSetList, error)
	}{{"cached", cached, nil}, {"uncached", uncached, nil}, {"previous", cached, previous}} {
		list := tc.list
		if list == nil {
			list = func(p *Provider, opts dns.ListRRSetsOptions) (dns.RRSetList, error) {
				return p.ListRRSets(bg, "bench.test", opts)
			}
		}
		b.Run(tc.name, func(b *testing.B) {
			var page1, last, export time.Duration
			for b.Loop() {
				t0 := time.Now()
				l, err := list(tc.p, dns.ListRRSetsOptions{Page: 1, PerPage: 100})
				t1 := time.Now()
				if err != nil || len(l.RRSets) != 100 || *l.Pagination.TotalEntries != records+2 {
					b.Fatalf("page 1: %d rrsets, %v", len(l.RRSets), err)
				}
				l, err = list(tc.p, dns.ListRRSetsOptions{Page: 51, PerPage: 100})
				t2 := time.Now()
				if err != nil || len(l.RRSets) != 2 {
					b.Fatalf("last page: %d rrsets, %v", len(l.RRSets), err)
				}
				x, err := tc.p.ExportZonefile(bg, "bench.test")
				t3 := time.Now()
				if err != nil || strings.Count(x, "\n") < records {
					b.Fatalf("export: %d lines, %v", strings.Count(x, "\n"), err)
				}
				page1, last, export = page1+t1.Sub(t0), last+t2.Sub(t1), export+t3.Sub(t2)
			}
			n := float64(b.N)
			b.ReportMetric(float64(page1.Microseconds())/n, "page1-µs")
			b.ReportMetric(float64(last.Microseconds())/n, "lastpage-µs")
			b.ReportMetric(float64(export.Microseconds())/n, "export-µs")
			b.ReportMetric(float64(export)/float64(page1), "export-per-page-x")
		})
	}
}
