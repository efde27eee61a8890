package bench

import (
	"net/http"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

// BenchmarkEgressListZones measures what the egress gate adds to a
// list_zones call of `bulwark dns` on the local store (listZones zones)
// over the HTTP handler: two servers built alike, the gate turned off in
// one (egress.SetGate), in process CPU time over rotating blocks of
// 100 calls (benchBlocks). cpu-gate/off is bounded at 1.05
// (docs/performance.md, "The egress gate").
func BenchmarkEgressListZones(b *testing.B) {
	off, hOff := dnsHTTP(b, "", nil)
	egress.SetGate(off, false)
	_, hOn := dnsHTTP(b, "", nil)
	benchBlocks(b, "off", "gate", []http.Handler{hOff, hOn}, func(int) string { return listZonesBody }, serveListZones)
}

// BenchmarkEgressListZonesOne runs one of BenchmarkEgressListZones'
// servers alone, the gate off or on, for an instruction count of the whole
// call under callgrind: deterministic where the machine's load makes a
// 5 % step in CPU time unresolvable (docs/performance.md, "The egress
// gate").
func BenchmarkEgressListZonesOne(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "gate"
		}
		b.Run(name, func(b *testing.B) {
			s, h := dnsHTTP(b, "", nil)
			egress.SetGate(s, on)
			for range 200 {
				serveListZones(b, h, listZonesBody)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				serveListZones(b, h, listZonesBody)
			}
		})
	}
}
