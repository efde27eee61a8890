package gateway

import (
	"encoding/json"
	"testing"
)

// FuzzRawTools: a raw tools/list result from a hostile upstream never
// panics the split, and a split that succeeds has one slot per decoded tool,
// each a valid JSON value or nil.
func FuzzRawTools(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","x-extra":1}]}`), 2)
	f.Add([]byte(`{"tools":[]}`), 0)
	f.Add([]byte(`{"tools":null,"nextCursor":"x"}`), 1)
	f.Add([]byte(`{"tools":[{"name":"a"}],"tools":[{"name":"b"}]}`), 1)
	f.Add([]byte(`[`), 1)
	f.Fuzz(func(t *testing.T, raw []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		out, err := rawTools(raw, n)
		if err != nil {
			return
		}
		if len(out) != n {
			t.Fatalf("%d slots for %d tools", len(out), n)
		}
		for _, o := range out {
			if o != nil && !json.Valid(o) {
				t.Fatalf("invalid slot %q", o)
			}
			if o != nil {
				sameName(o, "a")
			}
		}
	})
}
