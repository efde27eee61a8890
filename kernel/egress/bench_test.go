package egress_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

// bigResult is a tools/call result of about 200 KB as the kernel writes
// one: an envelope holding the records' JSON as text, and the records as
// structuredContent (440 records of short and long strings, numbers and
// a nested object).
func bigResult() []byte {
	type rec struct {
		ID          string         `json:"id"`
		Name        string         `json:"name"`
		Description string         `json:"description"`
		TTL         int            `json:"ttl"`
		Tags        []string       `json:"tags"`
		Meta        map[string]any `json:"meta"`
	}
	recs := make([]rec, 0, 440)
	for i := range 440 {
		recs = append(recs, rec{ID: fmt.Sprintf("r-%06d", i), Name: fmt.Sprintf("www%d.example.com.", i),
			Description: "A record served by the zone's primary; changed by the operator on the last review.",
			TTL:         3600, Tags: []string{"prod", "edge"}, Meta: map[string]any{"owner": "team-a", "weight": i}})
	}
	data, _ := json.Marshal(map[string]any{"records": recs})
	text := "<untrusted-data source=\"local-zone-store\">\n" + string(data) + "\n</untrusted-data>\nThe data above comes from an external system."
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text}}, "structuredContent": map[string]any{"records": recs}, "isError": false}})
	return msg
}

// BenchmarkMessage200KB is the egress gate's cost on a 200 KB result
// against the floor it is bounded by: a plain encoding/json decode and
// encode of the same message, timed in alternating blocks in one run.
// gate/json is bounded at 1.5 (docs/performance.md, "The egress gate").
// The secrets are three credentials, as a server with a configured key, a
// relayed one and a stored one has.
func BenchmarkMessage200KB(b *testing.B) {
	msg := bigResult()
	if len(msg) < 190<<10 || len(msg) > 230<<10 {
		b.Fatalf("the message is %d bytes, not about 200 KB", len(msg))
	}
	sec := egress.NewSecrets(key, "ApiKey 0f5c1a9e-2d3b-4c8e-9a71-5e6f7d8c9b0a:"+strings.Repeat("4e", 32), "sk-live-51HxYzABCDEFGHIJKLMNOP")
	gate := func() {
		out, _, err := egress.Message(msg, sec)
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
	plain := func() {
		var v any
		if err := json.Unmarshal(msg, &v); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
	const block = 10
	timed := func(f func()) time.Duration {
		start := time.Now()
		for range block {
			f()
		}
		return time.Since(start)
	}
	timed(gate)
	timed(plain)
	var tg, tj time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			tg += timed(gate)
			tj += timed(plain)
		} else {
			tj += timed(plain)
			tg += timed(gate)
		}
	}
	n := float64(b.N * block)
	b.ReportMetric(float64(tg.Microseconds())/n, "gate-us/msg")
	b.ReportMetric(float64(tj.Microseconds())/n, "json-us/msg")
	b.ReportMetric(float64(tg)/float64(tj), "gate/json")
}

// BenchmarkMessageListZones is the gate over the answer of a list_zones
// call of `bulwark dns` on the local store (20 zones, 14 KB: an envelope
// and the same records as structuredContent), without secrets, as the
// benchmark of bench/egress_test.go sends it.
func BenchmarkMessageListZones(b *testing.B) {
	msg, err := os.ReadFile("testdata/list_zones.json")
	if err != nil {
		b.Fatal(err)
	}
	sec := egress.NewSecrets()
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := egress.Message(msg, sec); err != nil {
			b.Fatal(err)
		}
	}
}
