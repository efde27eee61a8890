package gateway_test

import (
	"slices"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

// BenchmarkGatewayEgress measures what the egress gate adds to the
// gateway's relayed call (BenchmarkGatewayCall's 1 KB echo through
// throughGateway): two gateways built alike, the gate turned off in one
// (egress.SetGate), in alternating blocks of gatewayBlock calls, the
// first arm alternating by round. gate/off is bounded at 1.05
// (docs/performance.md, "The egress gate"); median-round-ratio resists a
// burst of other work.
func BenchmarkGatewayEgress(b *testing.B) {
	offCS, off := throughGatewayServer(b)
	egress.SetGate(off, false)
	onCS, _ := throughGatewayServer(b)
	block := func(call func() time.Duration) time.Duration {
		var sum time.Duration
		for range gatewayBlock {
			sum += call()
		}
		return sum
	}
	offCall := func() time.Duration { return timedCall(b, offCS, "fake.echo") }
	onCall := func() time.Duration { return timedCall(b, onCS, "fake.echo") }
	for range 2 {
		block(offCall)
		block(onCall)
	}
	var sOff, sOn time.Duration
	var ratios []float64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var a, g time.Duration
		if i%2 == 0 {
			a, g = block(offCall), block(onCall)
		} else {
			g, a = block(onCall), block(offCall)
		}
		sOff, sOn = sOff+a, sOn+g
		ratios = append(ratios, float64(g)/float64(a))
	}
	n := float64(b.N * gatewayBlock)
	slices.Sort(ratios)
	b.ReportMetric(float64(sOff.Microseconds())/n, "off-us/call")
	b.ReportMetric(float64(sOn.Microseconds())/n, "gate-us/call")
	b.ReportMetric(float64(sOn)/float64(sOff), "gate/off")
	b.ReportMetric(ratios[len(ratios)/2], "median-round-ratio")
}
