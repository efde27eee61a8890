package bench

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

var kernelEnvelope = untrusted.Envelope{Source: "bench"}

// doc200K is a ~200 KB result shaped like a page of RRSets, with a secret,
// non-ASCII text and long values in it.
func doc200K(tb testing.TB) []byte {
	var rrsets []map[string]any
	for i := 0; i < 850; i++ {
		rrsets = append(rrsets, map[string]any{
			"id": fmt.Sprintf("host%d/TXT", i), "name": fmt.Sprintf("host%d", i), "type": "TXT", "ttl": 300,
			"labels":     map[string]string{"env": "prod", "team": "dns"},
			"protection": map[string]bool{"change": false},
			"records":    []map[string]string{{"value": fmt.Sprintf(`"v=spf1 include:_spf%d.example.com ~all"`, i), "comment": "grüße"}},
			"tsig_key":   "c2VjcmV0",
		})
	}
	b, err := json.Marshal(map[string]any{"rrsets": rrsets})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkEnvelope200K compares wrapping, redacting and truncating a
// 200 KB JSON result with a plain encoding/json decode and re-encode of the
// same document, interleaved. envelope/baseline is the ratio the issue
// bounds (at most 1.5).
func BenchmarkEnvelope200K(b *testing.B) {
	doc := doc200K(b)
	env := &untrusted.Envelope{Source: "bench"}
	var te, tb time.Duration
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		start := time.Now()
		out, rep, err := env.JSON(doc)
		if err != nil {
			b.Fatal(err)
		}
		_ = env.Wrap(string(out), rep)
		te += time.Since(start)

		start = time.Now()
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
		tb += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(len(doc)), "doc-bytes")
	b.ReportMetric(float64(te.Nanoseconds())/n, "envelope-ns/op")
	b.ReportMetric(float64(tb.Nanoseconds())/n, "baseline-ns/op")
	b.ReportMetric(float64(te)/float64(tb), "envelope/baseline")
}
