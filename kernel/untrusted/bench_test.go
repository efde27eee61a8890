package untrusted

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Doc200K is a 200 KB result shaped like a list of RRSets, with a secret and
// some non-ASCII text in it.
func doc200K(tb testing.TB) []byte {
	var rrsets []map[string]any
	for i := 0; len(rrsets) < 850; i++ {
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

func BenchmarkEnvelopeJSON200K(b *testing.B) {
	doc := doc200K(b)
	e := &Envelope{Source: "bench"}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		out, rep, err := e.JSON(doc)
		if err != nil {
			b.Fatal(err)
		}
		_ = e.Wrap(string(out), rep)
	}
}

// BenchmarkBaselineDecodeEncode200K is the baseline the envelope is measured
// against: a plain encoding/json decode and re-encode of the same document.
func BenchmarkBaselineDecodeEncode200K(b *testing.B) {
	doc := doc200K(b)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}
