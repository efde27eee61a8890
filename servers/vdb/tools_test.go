package vdb_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// toolCalls is one good call of every data tool and the upstream path it
// must reach.
var toolCalls = []struct {
	tool string
	args map[string]any
	path string
}{
	{"vdb_vuln", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228"},
	{"vdb_timeline", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/timeline"},
	{"vdb_affected", map[string]any{"id": vdbapi.Log4Shell, "ecosystem": "maven"}, "/v2/vuln/CVE-2021-44228/affected"},
	{"vdb_fixes", map[string]any{"id": vdbapi.Log4Shell, "view": "registry"}, "/v2/vuln/CVE-2021-44228/fixes/registry"},
	{"vdb_remediation_plan", map[string]any{"id": vdbapi.Log4Shell, "currentVersion": "2.14.1"}, "/v2/vuln/CVE-2021-44228/remediation-plan"},
	{"vdb_workarounds", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/workarounds"},
	{"vdb_advisories", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/advisories"},
	{"vdb_cwe_guidance", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/cwe-guidance"},
	{"vdb_scorecard", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/scorecard"},
	{"vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/kev"},
	{"vdb_kev_list", map[string]any{"limit": 2}, "/v2/kev"},
	{"vdb_exploits", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/exploits"},
	{"vdb_exploit_search", map[string]any{"q": "log4"}, "/v2/exploits"},
	{"vdb_iocs", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/iocs"},
	{"vdb_sightings", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/sightings"},
	{"vdb_detection_rules", map[string]any{"kind": "snort", "id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/snort-rules"},
	{"vdb_attack_techniques", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/attack-techniques"},
	{"vdb_vex", map[string]any{"id": vdbapi.Log4Shell}, "/v2/vuln/CVE-2021-44228/vex"},
	{"vdb_triage", map[string]any{"minCvss": 9}, "/v2/triage"},
	{"vdb_package_search", map[string]any{"q": "log4j"}, "/v2/packages/search"},
	{"vdb_package", map[string]any{"ecosystem": "maven", "name": "org.apache.logging.log4j:log4j-core"}, "/v2/maven/org.apache.logging.log4j:log4j-core"},
	{"vdb_package_vulns", map[string]any{"package": "xz-utils"}, "/v2/xz-utils/vulns"},
	{"vdb_product", map[string]any{"name": "log4j"}, "/v2/product/log4j"},
	{"vdb_eol", map[string]any{"product": "nodejs"}, "/v2/eol/products/nodejs"},
	{"vdb_identifiers", map[string]any{"year": 2026, "month": 10}, "/v2/identifiers/2026/10"},
	{"vdb_catalog", map[string]any{"kind": "ecosystems"}, "/v2/ecosystems"},
	{"vdb_trends", map[string]any{"feed": "exploit"}, "/v2/exploit-trends"},
}

// TestEveryDataTool calls each of the 27 read-only tools through the MCP
// client against the fake: it reaches its path, answers inside the
// envelope, and says its cache is private.
func TestEveryDataTool(t *testing.T) {
	f := newFixture(t, setup{})
	if len(toolCalls) != 27 {
		t.Fatalf("%d tool calls listed, want the 27 tools", len(toolCalls))
	}
	for _, tc := range toolCalls {
		t.Run(tc.tool, func(t *testing.T) {
			f.fake.ResetRequests()
			res := f.call(t, tc.tool, tc.args)
			text := mcptest.Text(res)
			if res.IsError {
				t.Fatalf("%s: %s", tc.tool, text)
			}
			contains(t, text, "<untrusted-data", "</untrusted-data>")
			var out map[string]any
			mcptest.Structured(t, res, &out)
			if out["cacheScope"] != "private" {
				t.Errorf("cacheScope = %v", out["cacheScope"])
			}
			reqs := f.fake.Requests()
			if len(reqs) != 1 || reqs[0].Path != tc.path || reqs[0].Method != "GET" {
				t.Fatalf("upstream requests %+v, want one GET %s", reqs, tc.path)
			}
			lacks(t, text, f.key)
		})
	}
}

// TestVulnSummaryOfALargeRecord: a record over 2 MB is summarised, never
// passed whole; raw is cut and marked.
func TestVulnSummaryOfALargeRecord(t *testing.T) {
	f := newFixture(t, setup{})
	res := f.call(t, "vdb_vuln", map[string]any{"id": vdbapi.LargeVulnID})
	if res.IsError {
		t.Fatal(mcptest.Text(res))
	}
	if n := len(mcptest.Text(res)); n > 20_000 {
		t.Fatalf("the summary is %d bytes", n)
	}
	raw := f.ok(t, "vdb_vuln", map[string]any{"id": vdbapi.LargeVulnID, "detail": "raw"})
	if raw["truncated"] != true || len(raw["raw"].(string)) > 64<<10 {
		t.Fatalf("raw not cut: truncated=%v len=%d", raw["truncated"], len(raw["raw"].(string)))
	}
	full := f.call(t, "vdb_vuln", map[string]any{"id": vdbapi.LargeVulnID, "detail": "full"})
	if n := len(mcptest.Text(full)); n > 400_000 {
		t.Fatalf("full is %d bytes", n)
	}
}

// TestHugeRecordRefused: a record over the 3 MiB buffer is refused with
// resource_exhausted, never passed on.
func TestHugeRecordRefused(t *testing.T) {
	f := newFixture(t, setup{})
	f.fails(t, "vdb_vuln", map[string]any{"id": vdbapi.HugeVulnID}, kernel.ResourceExhausted)
}

// TestPagination: a list that holds more answers a nextCursor, and the
// cursor fetches the next page.
func TestPagination(t *testing.T) {
	f := newFixture(t, setup{})
	first := f.ok(t, "vdb_kev_list", map[string]any{"limit": 1})
	cur, ok := first["nextCursor"].(string)
	if !ok || cur != "1" {
		t.Fatalf("nextCursor = %v: %v", first["nextCursor"], first)
	}
	second := f.ok(t, "vdb_kev_list", map[string]any{"limit": 1, "cursor": cur})
	a, _ := json.Marshal(first["items"])
	b, _ := json.Marshal(second["items"])
	if string(a) == string(b) {
		t.Fatalf("the second page repeats the first: %s", a)
	}
	f.fails(t, "vdb_kev_list", map[string]any{"cursor": "-1"}, kernel.InvalidArgument)
}

// TestInjectionStaysInsideTheEnvelope: an instruction planted in a CVE
// description and PoC text reaches the client only inside the envelope,
// with its break-out tag neutralised, and changes no request.
func TestInjectionStaysInsideTheEnvelope(t *testing.T) {
	f := newFixture(t, setup{})
	f.fake.SetInjection(vdbapi.Injection)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"vdb_vuln", map[string]any{"id": vdbapi.Log4Shell}},
		{"vdb_exploits", map[string]any{"id": vdbapi.Log4Shell}},
		{"vdb_workarounds", map[string]any{"id": vdbapi.Log4Shell}},
	} {
		f.fake.ResetRequests()
		text := mcptest.Text(f.call(t, tc.tool, tc.args))
		i := strings.Index(text, "IGNORE PREVIOUS INSTRUCTIONS")
		if i < 0 {
			t.Fatalf("%s: the injected text is not in the result at all:\n%s", tc.tool, text)
		}
		open, end := strings.Index(text, "<untrusted-data"), strings.LastIndex(text, "</untrusted-data>")
		if open < 0 || open > i || end < i {
			t.Fatalf("%s: the injection is outside the envelope:\n%s", tc.tool, text)
		}
		if strings.Count(text, "</untrusted-data>") != 1 {
			t.Fatalf("%s: the planted closing tag survived:\n%s", tc.tool, text)
		}
		for _, r := range f.fake.Requests() {
			if r.Host != vdbapi.HostAPI || strings.Contains(r.Path, "cli.") {
				t.Fatalf("%s: the injection steered a request: %+v", tc.tool, r)
			}
		}
	}
	if len(f.fake.TripWires()) != 0 {
		t.Fatal("a trip-wire route was called")
	}
}

// TestArgumentsRefusedBeforeAnyRequest: bad identifiers and path segments
// never reach the upstream.
func TestArgumentsRefusedBeforeAnyRequest(t *testing.T) {
	f := newFixture(t, setup{})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"vdb_vuln", map[string]any{"id": "../auth/token"}},
		{"vdb_vuln", map[string]any{"id": "CVE-2021-44228/../../cli.sca"}},
		{"vdb_package", map[string]any{"ecosystem": "auth", "name": "token"}},
		{"vdb_package", map[string]any{"ecosystem": "maven", "name": ".."}},
		{"vdb_package_vulns", map[string]any{"package": "cli.sca"}},
		{"vdb_triage", map[string]any{}},
		{"vdb_triage", map[string]any{"minEpss": 0.1, "sort": "epss"}},
		{"vdb_identifiers", map[string]any{"year": 2099, "month": 1}},
		{"vdb_scorecard", map[string]any{}},
	} {
		res := f.call(t, tc.tool, tc.args)
		if !res.IsError {
			t.Errorf("%s %v succeeded", tc.tool, tc.args)
		}
	}
	if n := f.apiCalls(); n != 0 {
		t.Fatalf("%d upstream requests, want none: %+v", n, f.fake.Requests())
	}
}

// TestRequestEscapeHatch: vdb_request reaches an allowed path, and refuses
// the forbidden ones before any request is made.
func TestRequestEscapeHatch(t *testing.T) {
	f := newFixture(t, setup{})
	out := f.ok(t, "vdb_request", map[string]any{"path": "/vuln/" + vdbapi.Log4Shell + "/tree-sitter", "query": map[string]any{"language": "java", "_t": "1"}})
	if out["cacheScope"] != "private" {
		t.Fatalf("%v", out)
	}
	r := f.fake.Requests()[0]
	if r.Path != "/v2/vuln/CVE-2021-44228/tree-sitter" || r.RawQuery != "language=java" {
		t.Fatalf("upstream saw %s?%s", r.Path, r.RawQuery)
	}
	f.fake.ResetRequests()
	for _, p := range []string{"/cli.quality-gate-config", "/auth/api-key", "/vuln/%2e%2e/auth/token", "//evil.example/x",
		"https://evil.example/", "/exploits/6f1c9a7e-0c1e-4b55-9d1a-3f1f6e2a9b01/poc", "/raw/nvd/CVE-2021-44228", "/vuln/x?y=1"} {
		f.fails(t, "vdb_request", map[string]any{"path": p}, kernel.InvalidArgument)
	}
	f.fails(t, "vdb_request", map[string]any{"path": "/kev", "query": map[string]any{"bad key": "x"}}, kernel.InvalidArgument)
	if n := len(f.fake.Requests()); n != 0 {
		t.Fatalf("%d requests for refused paths", n)
	}
}
