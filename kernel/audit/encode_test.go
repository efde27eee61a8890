package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// TestAppendRecord: the hand-written encoder writes json.Marshal's bytes
// for empty, full and hostile records.
func TestAppendRecord(t *testing.T) {
	full := Record{Time: time.Date(2026, 12, 1, 1, 2, 3, 456789, time.FixedZone("x", 5400)), Principal: "alice", Plan: "pro",
		Scheme: "apikey", Network: "127.0.0.0/24", Tool: "get_rrset", Outcome: ToolError, ErrorCode: "invalid_argument",
		ErrorID: "3f9a", Duration: -time.Second, UpstreamCalls: 3, BytesIn: math.MaxInt64, BytesOut: math.MinInt64,
		ArgsDigest: "00ff", Authz: "deny", AuthzPolicies: []string{"p1", "<p2>"}, Confirm: ConfirmElicited,
		UpstreamRetries: 2, UpstreamBytesOut: 10, UpstreamBytesIn: 20, CacheHits: 1,
		Attrs: map[string]string{"z": "1", "a": "&", "\u2028": "\xff"}, Upstream: "up", Pin: "sha256:x"}
	for name, r := range map[string]Record{
		"zero":    {},
		"full":    full,
		"hostile": {Principal: "</script>\"\\\n\x00\u2029", Tool: "\xed\xa0\x80", AuthzPolicies: []string{""}, Attrs: map[string]string{"": ""}},
		"utc":     {Time: time.Unix(1, 0).UTC(), Outcome: OK},
		"local":   {Time: time.Unix(1, 5).In(time.Local)},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := appendRecord([]byte("x"), &r); err != nil || string(got) != "x"+string(want) {
			t.Errorf("%s: got %s (%v)\nwant x%s", name, got, err, want)
		}
	}
	// A time encoding/json refuses fails both, and JSONLines writes nothing.
	bad := Record{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := json.Marshal(bad); err == nil {
		t.Fatal("encoding/json encoded year 10000")
	}
	if _, err := appendRecord(nil, &bad); err == nil {
		t.Fatal("appendRecord encoded year 10000")
	}
	var buf bytes.Buffer
	NewJSONLines(&buf).Write(context.Background(), bad)
	if buf.Len() != 0 {
		t.Fatalf("wrote %q", buf.Bytes())
	}
}

func FuzzAppendRecord(f *testing.F) {
	f.Add("alice", "get_rrset", "p1", "k", "v", int64(1764550000), int64(5), int64(-3), 2)
	f.Add("<&>\u2028", "\xff", "", "", "\x00", int64(-62135596800), int64(0), int64(math.MaxInt64), 0)
	f.Fuzz(func(t *testing.T, s1, s2, s3, k, v string, sec, nsec, n int64, hits int) {
		r := Record{Time: time.Unix(sec, nsec), Principal: s1, Plan: s2, Scheme: s3, Network: s1, Tool: s2,
			Outcome: Outcome(s3), ErrorCode: s1, ErrorID: s2, Duration: time.Duration(n), UpstreamCalls: hits,
			BytesIn: n, BytesOut: -n, ArgsDigest: s3, Authz: s1, Confirm: Confirm(s2), UpstreamRetries: nsec,
			UpstreamBytesOut: sec, UpstreamBytesIn: n, CacheHits: hits, Upstream: s3, Pin: s1}
		if s1 != "" {
			r.AuthzPolicies = []string{s1, s2}
		}
		if k != "" || v != "" {
			r.Attrs = map[string]string{k: v, s1: s2}
		}
		want, werr := json.Marshal(r)
		got, gerr := appendRecord(nil, &r)
		if (werr != nil) != (gerr != nil) || (werr == nil && string(got) != string(want)) {
			t.Fatalf("got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}

func BenchmarkJSONLines(b *testing.B) {
	r := Record{Time: time.Now(), Principal: "local", Plan: "local", Scheme: "none", Network: "127.0.0.0/24",
		Tool: "get_rrset", Outcome: OK, Duration: 12345, BytesIn: 40, BytesOut: 200, ArgsDigest: "0123456789abcdef0123456789abcdef"}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(r)
		}
	})
	b.Run("appendRecord", func(b *testing.B) {
		s := NewJSONLines(discardWriter{})
		b.ReportAllocs()
		for b.Loop() {
			s.Write(context.Background(), r)
		}
	})
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
