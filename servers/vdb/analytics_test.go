package vdb_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
)

// TestAnalyticsOnePointPerCall: every tool call writes one point with the
// tool, scheme, outcome, cache hit and upstream counts — never the
// credential, the organisation id or an argument.
func TestAnalyticsOnePointPerCall(t *testing.T) {
	f := newFixture(t, setup{})
	f.ok(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	f.ok(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	f.call(t, "vdb_vuln", map[string]any{"id": "CVE-1900-0001"})
	pts := f.points.all()
	if len(pts) != 3 {
		t.Fatalf("%d points, want 3", len(pts))
	}
	if p := pts[0]; p.Tool != "vdb_kev_status" || p.Scheme != "apikey" || p.Outcome != "ok" || p.CacheHit || p.UpstreamCalls != 1 || p.BytesIn == 0 {
		t.Fatalf("first: %+v", p)
	}
	if p := pts[1]; !p.CacheHit || p.UpstreamCalls != 0 {
		t.Fatalf("second: %+v", p)
	}
	if p := pts[2]; p.Outcome != "not_found" {
		t.Fatalf("third: %+v", p)
	}
	b, _ := json.Marshal(pts)
	_, hex, _ := strings.Cut(f.key, ":")
	lacks(t, string(b), hex, vdbapi.OrgA, vdbapi.Log4Shell, "CVE-1900-0001")
}
