package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestJSONLines(t *testing.T) {
	var buf bytes.Buffer
	s := NewJSONLines(&buf)
	s.Write(context.Background(), Record{Time: time.Unix(0, 0).UTC(), Principal: "local", Tool: "list_zones", Outcome: OK, Duration: time.Millisecond})
	s.Write(context.Background(), Record{Principal: "p", Tool: "delete_zone", Outcome: Refused})
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	var r Record
	if err := json.Unmarshal(lines[0], &r); err != nil || r.Tool != "list_zones" || r.Outcome != OK || r.Duration != time.Millisecond {
		t.Fatalf("%+v %v", r, err)
	}
}

// A server's notes travel on the same line as the kernel's fields.
func TestJSONLinesCarriesServerNotes(t *testing.T) {
	var buf bytes.Buffer
	NewJSONLines(&buf).Write(context.Background(), Record{Tool: "vdb_vuln", Outcome: OK, UpstreamRetries: 1, CacheHits: 2,
		Attrs: map[string]string{"ai": "ok"}})
	for _, want := range []string{`"upstream_retries":1`, `"cache_hits":2`, `"attrs":{"ai":"ok"}`} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("%s lacks %s", buf.Bytes(), want)
		}
	}
}
