package vdb_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
)

// TestOneAuditRecordPerCall: the security page's analytics are the
// kernel's audit record, one per tool call, with the tool, outcome, cache
// hits, upstream counts and vdb's own attributes (credential scheme, the
// Vulnetix plan) — never the credential, the organisation id or an
// argument's value.
func TestOneAuditRecordPerCall(t *testing.T) {
	f := newFixture(t, setup{})
	f.ok(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	f.ok(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	f.call(t, "vdb_vuln", map[string]any{"id": "CVE-1900-0001"})
	recs := f.audit.all()
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	if r := recs[0]; r.Tool != "vdb_kev_status" || r.Attrs["credential_scheme"] != "apikey" || r.Outcome != audit.OK || r.CacheHits != 0 ||
		r.UpstreamCalls != 1 || r.UpstreamBytesIn == 0 || r.Attrs["vdb_plan"] != "pro" {
		t.Fatalf("first: %+v", r)
	}
	if r := recs[1]; r.CacheHits != 1 || r.UpstreamCalls != 0 {
		t.Fatalf("second: %+v", r)
	}
	if r := recs[2]; r.Outcome != audit.ToolError || r.ErrorCode != "not_found" {
		t.Fatalf("third: %+v", r)
	}
	b, _ := json.Marshal(recs)
	_, hex, _ := strings.Cut(f.key, ":")
	lacks(t, string(b), hex, vdbapi.OrgA, vdbapi.Log4Shell, "CVE-1900-0001")
}
