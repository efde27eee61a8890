package localzone

import (
	"net/netip"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/internal/fake/realdns"
)

// xfrBenchRecords is the size of the zone the transfer benchmarks send.
const xfrBenchRecords = 100_000

// BenchmarkAXFROut: the hidden primary sends a 100,000-record zone by AXFR
// (signed with TSIG, to a listed secondary), against BIND 9 sending the
// same zone file from this machine in the same run. The "ratio" run
// alternates the two within each iteration and reports bulwark's
// throughput over BIND's as ratio-x (the goal is at least 0.5). Run:
//
//	go test -run '^$' -bench AXFROut -benchtime 10x ./servers/dns/localzone
func BenchmarkAXFROut(b *testing.B) {
	realdns.Named(b)
	text := bigZoneText(xfrBenchRecords)
	p, _ := newTestProvider(b, "")
	mustZone(b, p, "bench.test")
	if _, err := p.ImportZonefile(bg, "bench.test", text); err != nil {
		b.Fatal(err)
	}
	r := startResponder(b, p, &ResponderOptions{Keys: primaryKeys(b), DisableRateLimit: true,
		Secondaries: []Secondary{{Addr: netip.MustParseAddrPort("127.0.0.1:9"), Key: xfrKey}}})
	bind := realdns.StartBIND(b, realdns.Config{Key: realdns.Key{Name: xfrKey, Algorithm: "hmac-sha256", Secret: xfrSecret},
		Zones: []realdns.Zone{{Name: "bench.test", Text: text}}}, false)
	want := xfrBenchRecords + 3 // the records, the NS, the SOA twice
	run := func(b *testing.B, addr string) time.Duration {
		start := time.Now()
		n := benchXFR(b, addr)
		if n != want {
			b.Fatalf("%s sent %d records, want %d", addr, n, want)
		}
		return time.Since(start)
	}
	b.Run("bulwark", func(b *testing.B) {
		for range b.N {
			run(b, r.Addr())
		}
		b.ReportMetric(float64(want*b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("bind", func(b *testing.B) {
		for range b.N {
			run(b, bind.Addr)
		}
		b.ReportMetric(float64(want*b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("ratio", func(b *testing.B) {
		var ours, theirs time.Duration
		for i := range b.N {
			if i%2 == 0 {
				ours += run(b, r.Addr())
				theirs += run(b, bind.Addr)
			} else {
				theirs += run(b, bind.Addr)
				ours += run(b, r.Addr())
			}
		}
		b.ReportMetric(theirs.Seconds()/ours.Seconds(), "ratio-x")
		b.ReportMetric(float64(want*b.N)/ours.Seconds(), "bulwark-records/s")
		b.ReportMetric(float64(want*b.N)/theirs.Seconds(), "bind-records/s")
	})
}

// benchXFR takes the zone by AXFR, signed, and counts its records.
func benchXFR(b *testing.B, addr string) int {
	m := new(mdns.Msg)
	m.SetAxfr("bench.test.")
	m.SetTsig(xfrKey, mdns.HmacSHA256, 300, time.Now().Unix())
	tr := &mdns.Transfer{TsigSecret: map[string]string{xfrKey: xfrSecret}, ReadTimeout: 30 * time.Second}
	ch, err := tr.In(m, addr)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for env := range ch {
		if env.Error != nil {
			b.Fatalf("%s: %v", addr, env.Error)
		}
		n += len(env.RR)
	}
	return n
}

// BenchmarkSignZone: what DNSSEC costs the responder for a 100,000-record
// zone, against indexing the same zone unsigned in the same run: a first
// signing (every signature made), and a signing after one record changed
// (the signatures of what did not change reused). Run:
//
//	go test -run '^$' -bench SignZone -benchtime 3x ./servers/dns/localzone
func BenchmarkSignZone(b *testing.B) {
	for _, alg := range []string{AlgECDSAP256, AlgEd25519} {
		b.Run(alg, func(b *testing.B) {
			dir := b.TempDir()
			p, err := New(dir, &Options{DisableSync: true, DNSSEC: map[string]DNSSEC{"bench.test": {Algorithm: alg, Denial: DenialNSEC}}})
			if err != nil {
				b.Fatal(err)
			}
			mustZone(b, p, "bench.test")
			if _, err := p.ImportZonefile(bg, "bench.test", bigZoneText(xfrBenchRecords)); err != nil {
				b.Fatal(err)
			}
			k, d, err := p.signingKey(bg, "bench.test")
			if err != nil {
				b.Fatal(err)
			}
			var plain, first, again time.Duration
			for range b.N {
				start := time.Now()
				idx, err := readIndex(dir, "bench.test")
				if err != nil {
					b.Fatal(err)
				}
				plain += time.Since(start)
				start = time.Now()
				signed, err := signIndex(idx, k, d, time.Now(), nil)
				if err != nil {
					b.Fatal(err)
				}
				first += time.Since(start)
				idx.all = append(idx.all, &mdns.A{Hdr: mdns.RR_Header{Name: "new.bench.test.", Rrtype: mdns.TypeA, Class: mdns.ClassINET, Ttl: 3600}, A: []byte{10, 9, 9, 9}})
				start = time.Now()
				if _, err := signIndex(idx, k, d, time.Now(), signed.sec.sigs); err != nil {
					b.Fatal(err)
				}
				again += time.Since(start)
			}
			b.ReportMetric(plain.Seconds()*1000/float64(b.N), "index-ms")
			b.ReportMetric(first.Seconds()*1000/float64(b.N), "sign-ms")
			b.ReportMetric(again.Seconds()*1000/float64(b.N), "resign-ms")
			b.ReportMetric(first.Seconds()/plain.Seconds(), "sign/index-x")
		})
	}
}
