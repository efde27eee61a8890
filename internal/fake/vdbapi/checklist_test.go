package vdbapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Reference §1: /health at the host root, no version, no auth.
func TestHealthNeedsNoAuth(t *testing.T) {
	f := start(t, nil)
	r := send(t, "GET", f.APIURL()+"/health", "", nil, "")
	if r.status != 200 || r.str("status") != "ok" {
		t.Fatalf("health: %d %s", r.status, r.raw)
	}
}

// Reference §7 and §11: both schemes for configured principals; 401 for a
// missing, unknown, malformed or doubled-prefix key; 403 for an inactive org.
func TestAuthRefusals(t *testing.T) {
	f := start(t, nil)
	path := f.APIURL() + APIVersion + "/vuln/" + Log4Shell
	hex := strings.SplitN(f.key, ":", 2)[1]
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"apikey", "ApiKey " + f.key, 200},
		{"bearer", "Bearer " + f.bearer, 200},
		{"missing", "", 401},
		{"doubled org prefix", "ApiKey " + OrgA + ":" + f.key, 401},
		{"key without org", "ApiKey " + hex, 401},
		{"wrong org for key", "ApiKey " + OrgB + ":" + hex, 401},
		{"unknown bearer", "Bearer nope", 401},
		{"apikey value as bearer", "Bearer " + f.key, 401},
		{"basic", "Basic dXNlcjpwYXNz", 401},
		{"scheme only", "ApiKey", 401},
		{"lower-case scheme", "apikey " + f.key, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, "GET", path, tc.auth, nil, "")
			if r.status != tc.want {
				t.Fatalf("status %d, want %d (%s)", r.status, tc.want, r.raw)
			}
			if tc.want == 401 {
				if r.body["success"] != false || r.str("error") == "" || r.header.Get("WWW-Authenticate") == "" {
					t.Fatalf("refusal shape: %s %v", r.raw, r.header)
				}
				if r.header.Get("RateLimit-Remaining") != "" {
					t.Fatal("an unauthenticated answer carries quota headers")
				}
			}
		})
	}
	// Two Authorization headers are refused, not merged.
	req, _ := http.NewRequest("GET", path, nil)
	req.Header.Add("Authorization", "ApiKey "+f.key)
	req.Header.Add("Authorization", "Bearer "+f.bearer)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("two credentials: %d", res.StatusCode)
	}
	f.SetInactive(OrgA, true)
	if r := f.get(t, "/vuln/"+Log4Shell); r.status != 403 || r.body["success"] != false {
		t.Fatalf("inactive org: %d %s", r.status, r.raw)
	}
}

// The org each request resolved to is recorded, for per-principal tests.
func TestRequestsRecordOrgAndRedact(t *testing.T) {
	f := start(t, nil)
	f.get(t, "/ecosystems")
	send(t, "GET", f.APIURL()+APIVersion+"/ecosystems", "Bearer "+f.bearer, nil, "")
	send(t, "GET", f.APIURL()+APIVersion+"/ecosystems", "Bearer wrong", nil, "")
	reqs := f.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range []struct{ org, scheme string }{{OrgA, "ApiKey"}, {OrgB, "Bearer"}, {"", "Bearer"}} {
		r := reqs[i]
		if r.Org != want.org || r.Scheme != want.scheme || r.Host != HostAPI || r.Path != "/v2/ecosystems" {
			t.Fatalf("request %d: %+v", i, r)
		}
		if strings.Contains(r.Header.Get("Authorization"), "tok") || strings.Contains(r.Header.Get("Authorization"), OrgA) {
			t.Fatalf("request %d header not redacted: %q", i, r.Header.Get("Authorization"))
		}
	}
	if !reqs[0].Contains(f.key) || !reqs[1].Contains(f.bearer) || reqs[0].Contains(f.bearer) {
		t.Fatal("Contains does not search the unredacted request")
	}
	if reqs[0].Status != 200 || reqs[2].Status != 401 {
		t.Fatalf("statuses %d %d", reqs[0].Status, reqs[2].Status)
	}
}

// Reference §4: the headers on every authenticated answer, the daily quota,
// and 429 with Retry-After when it is used up.
func TestRateLimitHeadersAndQuota(t *testing.T) {
	f := start(t, &Options{DayLimit: 3})
	reset := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i, want := range []string{"2", "1", "0"} {
		r := f.get(t, "/sources")
		h := r.header
		if r.status != 200 || h.Get("RateLimit-DayLimit") != "3" || h.Get("RateLimit-Remaining") != want ||
			h.Get("RateLimit-Reset") != strconv.FormatInt(reset, 10) || h.Get("X-VDB-Plan") != PlanPro ||
			h.Get("X-Softlimits") != "" {
			t.Fatalf("call %d: %d %v", i, r.status, h)
		}
	}
	r := f.get(t, "/sources")
	if r.status != 429 || r.header.Get("RateLimit-Remaining") != "0" || r.header.Get("Retry-After") != strconv.Itoa(12*3600) {
		t.Fatalf("exhausted: %d %v", r.status, r.header)
	}
	// OrgB has its own quota.
	if r := send(t, "GET", f.APIURL()+APIVersion+"/sources", "Bearer "+f.bearer, nil, ""); r.status != 200 {
		t.Fatalf("other org: %d", r.status)
	}
	// The quota resets at the next UTC midnight.
	f.clock.Advance(12 * time.Hour)
	if r := f.get(t, "/sources"); r.status != 200 || r.header.Get("RateLimit-Remaining") != "2" {
		t.Fatalf("after reset: %d %v", r.status, r.header)
	}
	f.SetQuota(OrgA, -1, 0)
	f.SetPlan(OrgA, PlanEnterprise)
	if r := f.get(t, "/sources"); r.status != 200 || r.header.Get("RateLimit-DayLimit") != "unlimited" ||
		r.header.Get("RateLimit-Remaining") != "unlimited" || r.header.Get("X-VDB-Plan") != PlanEnterprise {
		t.Fatalf("unlimited: %v", r.header)
	}
}

func TestSoftLimitsNeverBlock(t *testing.T) {
	f := start(t, &Options{SoftLimits: true, DayLimit: 1})
	for range 3 {
		if r := f.get(t, "/sources"); r.status != 200 || r.header.Get("X-Softlimits") != "true" {
			t.Fatalf("soft limits: %d %v", r.status, r.header)
		}
	}
}

// Reference §11: 429 with Retry-After as seconds, as an HTTP-date, or absent.
func TestScriptedRateLimit(t *testing.T) {
	f := start(t, nil)
	for _, tc := range []struct {
		style RetryAfterStyle
		want  string
	}{
		{RetryAfterSeconds, "7"},
		{RetryAfterDate, f.clock.Now().Add(7 * time.Second).Format(http.TimeFormat)},
		{RetryAfterAbsent, ""},
	} {
		f.AddFault(Fault{Kind: FaultRateLimited, Times: 1, RetryAfter: tc.style, RetryAfterSecs: 7})
		r := f.get(t, "/sources")
		if r.status != 429 || r.header.Get("Retry-After") != tc.want || r.header.Get("RateLimit-Reset") == "" ||
			r.header.Get("RateLimit-Remaining") != "0" {
			t.Fatalf("style %d: %d %v", tc.style, r.status, r.header)
		}
		if r := f.get(t, "/sources"); r.status != 200 {
			t.Fatalf("after one scripted 429: %d", r.status)
		}
	}
}

// Reference §5: X-Cache, no-cache plus _t, ETag and 304 on enumerations.
func TestCacheHeaders(t *testing.T) {
	f := start(t, nil)
	r1 := f.get(t, "/ecosystems")
	r2 := f.get(t, "/ecosystems")
	if r1.header.Get("X-Cache") != "MISS" || r2.header.Get("X-Cache") != "HIT" {
		t.Fatalf("X-Cache %q then %q", r1.header.Get("X-Cache"), r2.header.Get("X-Cache"))
	}
	etag := r1.header.Get("ETag")
	if etag == "" || r1.header.Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("enumeration headers: %v", r1.header)
	}
	bust := send(t, "GET", f.APIURL()+APIVersion+"/ecosystems?_t=1700000000000", "ApiKey "+f.key,
		map[string]string{"Cache-Control": "no-cache"}, "")
	if bust.header.Get("X-Cache") != "MISS" {
		t.Fatal("no-cache did not bypass the edge cache")
	}
	if r := f.get(t, "/ecosystems?_t=123"); r.header.Get("X-Cache") != "HIT" {
		t.Fatal("_t is part of the cache key")
	}
	nm := send(t, "GET", f.APIURL()+APIVersion+"/ecosystems", "ApiKey "+f.key, map[string]string{"If-None-Match": etag}, "")
	if nm.status != 304 || len(nm.raw) != 0 || nm.header.Get("ETag") != etag {
		t.Fatalf("If-None-Match: %d %q", nm.status, nm.raw)
	}
	other := send(t, "GET", f.APIURL()+APIVersion+"/ecosystems", "ApiKey "+f.key, map[string]string{"If-None-Match": `"nope"`}, "")
	if other.status != 200 {
		t.Fatalf("stale etag: %d", other.status)
	}
	v := f.get(t, "/vuln/"+Log4Shell)
	if v.header.Get("ETag") != "" || v.header.Get("Cache-Control") != "private, max-age=300" ||
		v.header.Get("Last-Modified") != "Sat, 01 Jun 2024 00:00:00 GMT" {
		t.Fatalf("record headers: %v", v.header)
	}
	if x := f.get(t, "/vex"); x.header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("vex: %v", x.header)
	}
	f.SetCacheControl("/v2/vuln/", "no-cache")
	if v := f.get(t, "/vuln/"+Log4Shell); v.header.Get("Cache-Control") != "no-cache" {
		t.Fatal("SetCacheControl ignored")
	}
	f.SetCacheControl("/v2/vuln/", "max-age=300", "no-store")
	if v := f.get(t, "/vuln/"+Log4Shell); fmt.Sprint(v.header.Values("Cache-Control")) != "[max-age=300 no-store]" {
		t.Fatalf("two Cache-Control lines: %q", v.header.Values("Cache-Control"))
	}
}

// Reference §2: paging is limit and offset.
func TestPagination(t *testing.T) {
	f := start(t, nil)
	total := CatalogueSize + 1 // Log4Shell is the one seeded KEV record
	seen := map[string]bool{}
	for off := 0; ; off += 100 {
		r := f.get(t, "/kev?limit=100&offset="+strconv.Itoa(off))
		if r.status != 200 || int(r.body["total"].(float64)) != total {
			t.Fatalf("page %d: %d %s", off, r.status, r.raw[:min(200, len(r.raw))])
		}
		for _, it := range r.items() {
			seen[it.(map[string]any)["cveId"].(string)] = true
		}
		if r.body["hasMore"] != (off+100 < total) {
			t.Fatalf("hasMore at %d: %v", off, r.body["hasMore"])
		}
		if r.body["hasMore"] == false {
			break
		}
	}
	if len(seen) != total {
		t.Fatalf("paged through %d distinct entries, want %d", len(seen), total)
	}
	if r := f.get(t, "/kev"); len(r.items()) != 20 || r.body["limit"].(float64) != 20 {
		t.Fatalf("default limit: %d", len(r.items()))
	}
	if r := f.get(t, "/kev?offset=100000"); r.status != 200 || len(r.items()) != 0 || r.body["hasMore"] != false {
		t.Fatalf("past the end: %s", r.raw)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=-1", "limit=abc", "limit=1e2", "offset=-5",
		"limit=10&limit=20", "offset=%2B1", "limit=9999999999"} {
		if r := f.get(t, "/kev?"+q); r.status != 400 || r.body["success"] != false {
			t.Errorf("%s: %d", q, r.status)
		}
	}
	if r := f.get(t, "/triage?severity=critical&limit=200"); r.status != 200 {
		t.Fatalf("triage limit 200: %d %s", r.status, r.raw)
	}
	if r := f.get(t, "/triage?severity=critical&limit=201"); r.status != 400 {
		t.Fatalf("triage limit 201: %d", r.status)
	}
}

// Reference §11 fixtures.
func TestFixtures(t *testing.T) {
	f := start(t, &Options{TolerateTripWires: true})
	f.AddVuln(Vuln{ID: "CVE-2099-0001", Affected: []Affected{{Ecosystem: "npm", Package: "@scope/pkg", Introduced: "1.0.0"}}})
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/vuln/CVE-1999-0001", 404},
		{"/vuln/" + strings.ToLower(Log4Shell), 200},
		{"/no-such-route", 404},
		{"/gcve/2026/11", 200},
		{"/gcve/2026/12", 400},
		{"/gcve/2027/01", 400},
		{"/gcve/2026/13", 400},
		{"/identifiers/2026/12", 400},
		{"/triage?sort=epss", 400},
		{"/triage?sort=epss&minEpss=0.2", 400},
		{"/triage?sort=epss&minEpss=0.3", 200},
		{"/triage?sort=epss&minEpssPercentile=0.9", 200},
		{"/triage?sort=bogus&severity=high", 400},
		{"/packages/search", 400},
		{"/packages/search?q=log4j", 200},
		{"/maven/org.apache.logging.log4j/log4j-core", 200},
		{"/notaneco/org.apache.logging.log4j/log4j-core", 404},
		{"/npm/@scope/pkg", 200},   // an npm scope as its own segment
		{"/npm/scope/pkg", 404},    // without "@" it is a Maven-style group:artifact
		{"/maven/@scope/pkg", 404}, // only npm reads "@scope" as a scope
		{"/log4j-core/vulns", 200},
		{"/deb/xz-utils/versions", 200},
		{"/eol/products/python/releases/3.8", 200},
		{"/product/log4j", 200},
		{"/vuln/" + Log4Shell + "/remediation-plan?ecosystem=maven&includeGuidance=true", 200},
	} {
		if r := f.get(t, tc.path); r.status != tc.want {
			t.Errorf("%s: %d, want %d (%s)", tc.path, r.status, tc.want, r.raw)
		}
	}
	r := send(t, "PUT", f.APIURL()+APIVersion+"/vuln/"+Log4Shell, "ApiKey "+f.key, nil, "{}")
	if r.status != 405 {
		t.Fatalf("PUT: %d", r.status)
	}
}

// Every route of the §10.2 tool surface answers 200 with JSON for a
// seeded record.
func TestToolSurfaceRoutes(t *testing.T) {
	f := start(t, nil)
	id := Log4Shell
	paths := []string{"/vuln/" + id, "/vuln/" + id + "/timeline?include=published,kev-added", "/vuln/" + id + "/affected?ecosystem=maven",
		"/vuln/" + id + "/scorecard", "/scorecard/search?q=apache/logging-log4j2", "/vuln/" + id + "/fixes",
		"/vuln/" + id + "/fixes/registry", "/vuln/" + id + "/fixes/distributions", "/vuln/" + id + "/fixes/source",
		"/vuln/" + id + "/remediation-plan", "/vuln/" + id + "/workarounds", "/vuln/" + id + "/advisories",
		"/vuln/" + id + "/cwe-guidance", "/vuln/" + id + "/kev", "/kev?cveId=" + id, "/vulnetix-kev",
		"/vuln/" + id + "/exploits", "/exploits?minEpss=0.5", "/exploits/6f1c9a7e-0c1e-4b55-9d1a-3f1f6e2a9b01",
		"/exploit-sources", "/exploit-types", "/vuln/" + id + "/iocs", "/iocs?cveId=" + id, "/vuln/" + id + "/sightings",
		"/vuln/" + id + "/nuclei", "/vuln/" + id + "/snort-rules", "/snort-rules?cveId=" + id, "/vuln/" + id + "/yara-rules",
		"/yara-rules", "/vuln/" + id + "/attack-techniques", "/attack-techniques?cveId=" + id, "/vuln/" + id + "/vex",
		"/vex", "/triage?inKev=true", "/packages/search?q=xz", "/maven/org.apache.logging.log4j:log4j-core",
		"/maven/org.apache.logging.log4j:log4j-core/versions", "/log4j-core/vulns", "/product/log4j/2.14.0",
		"/product/log4j/2.14.0/maven", "/eol/products/python", "/eol/packages/npm/lodash/versions/0.9.0",
		"/identifiers?prefix=CVE-2021", "/identifiers/2021/12", "/gcve?start=2025-01-01&end=2025-01-31", "/gcve/2025/01",
		"/ecosystems", "/sources", "/metric-types", "/fix-distributions", "/summary", "/vendor-trends?vendor=apache",
		"/exploit-trends", "/msrc/patch-tuesdays", "/msrc/patch-tuesday/2025-01-14", "/ai-discoveries",
		"/ai-assisted-exploits", "/ai-in-wild-exploitations", "/ai-generated-malware", "/cloud-locators?vendor=aws",
		"/vuln/" + id + "/tree-sitter?language=java", "/raw/sources", "/spec"}
	for _, p := range paths {
		r := f.get(t, p)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.body == nil {
			t.Errorf("%s: %d %s %.120s", p, r.status, r.header.Get("Content-Type"), r.raw)
		}
	}
	if r := f.get(t, "/vuln/"+id+"/nuclei?format=yaml"); r.status != 200 || r.header.Get("Content-Type") != "application/yaml" {
		t.Errorf("nuclei yaml: %d %s", r.status, r.header.Get("Content-Type"))
	}
}

// Reference §2/§9: the binary routes answer octet-stream with their headers.
func TestBinaryRoutes(t *testing.T) {
	f := start(t, nil)
	poc := f.get(t, "/exploits/6f1c9a7e-0c1e-4b55-9d1a-3f1f6e2a9b01/poc")
	if poc.status != 200 || poc.header.Get("Content-Type") != "application/octet-stream" ||
		len(poc.header.Get("X-Vulnetix-Sha256")) != 64 || poc.header.Get("X-Vulnetix-Original-Url") == "" ||
		!strings.HasPrefix(poc.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("poc: %d %v", poc.status, poc.header)
	}
	raw := f.get(t, "/raw/nvd/"+Log4Shell)
	if raw.status != 200 || raw.header.Get("Content-Type") != "application/octet-stream" ||
		raw.header.Get("X-Vulnetix-R2-Path") == "" || raw.header.Get("X-Vulnetix-Sha256") == "" {
		t.Fatalf("raw: %d %v", raw.status, raw.header)
	}
}

// Reference §2: /vex is org-scoped.
func TestVEXIsOrgScoped(t *testing.T) {
	f := start(t, nil)
	f.SetVEX(OrgA, Log4Shell, "not_affected")
	f.SetVEX(OrgB, Log4Shell, "affected")
	a := f.get(t, "/vuln/"+Log4Shell+"/vex")
	b := send(t, "GET", f.APIURL()+APIVersion+"/vuln/"+Log4Shell+"/vex", "Bearer "+f.bearer, nil, "")
	sa := a.items()[0].(map[string]any)["status"]
	sb := b.items()[0].(map[string]any)["status"]
	if sa != "not_affected" || sb != "affected" {
		t.Fatalf("vex: %v / %v", sa, sb)
	}
	f.AddBearer(OrgB+"x", "tok-c")
	c := send(t, "GET", f.APIURL()+APIVersion+"/vex", "Bearer tok-c", nil, "")
	if len(c.items()) != 0 {
		t.Fatalf("third org sees %s", c.raw)
	}
}

// Records large enough to cross the 3 MiB line, valid JSON of the exact
// advertised size.
func TestBigRecords(t *testing.T) {
	f := start(t, nil)
	for id, size := range map[string]int{LargeVulnID: LargeVulnSize, HugeVulnID: HugeVulnSize} {
		r := f.get(t, "/vuln/"+id)
		if r.status != 200 || len(r.raw) != size || r.header.Get("Content-Length") != strconv.Itoa(size) {
			t.Fatalf("%s: %d, %d bytes, want %d", id, r.status, len(r.raw), size)
		}
		if !json.Valid(r.raw) || !bytes.Contains(r.raw[:4096], []byte(`"id":"`+id+`"`)) ||
			bytes.Count(r.raw, []byte(`"packageName"`)) < 1000 {
			t.Fatalf("%s: not a valid record with many ranges", id)
		}
	}
	raw := f.get(t, "/raw/nvd/"+HugeVulnID)
	if raw.status != 200 || len(raw.raw) != HugeVulnSize || raw.header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("huge raw archive: %d, %d bytes", raw.status, len(raw.raw))
	}
	if HugeVulnSize <= 3<<20 || LargeVulnSize <= 2_000_000 {
		t.Fatal("fixture sizes no longer cross their lines")
	}
}
