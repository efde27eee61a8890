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
