package vdbapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// recTB is a testing.TB that records Errorf instead of failing, to prove
// that Start fails the test on a trip-wire.
type recTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// Reference §9 and §11: every route bulwark must never reach is present,
// recorded as a trip-wire and fails the test of a Server made by Start.
func TestTripWires(t *testing.T) {
	for _, tc := range []struct{ method, path string }{
		{"POST", "/v2/cli.quality-gate-config"},
		{"POST", "/v2/cli.ai-firewall-key"},
		{"GET", "/v2/cli.vuln"},
		{"GET", "/v2/auth/token"},
		{"GET", "/v2/auth/api-key"},
		{"GET", "/v2/auth"},
		{"POST", "/v2/crit/lookup"},
		{"POST", "/v1/uploads/initiate"},
		{"GET", "/v1/uploads/verify"},
		{"POST", "/v2/vuln/CVE-2021-44228"},
		{"DELETE", "/v2/kev"},
		{"PATCH", "/v2/ecosystems"},
		{"GET", "/v2/%63li.scan"},
		{"GET", "/v2/vuln/../cli.scan"},
		{"GET", "/v2/vuln/%2e%2e/auth/api-key"},
		{"GET", "/v2/vuln/%252e%252e/auth/token"},
		{"GET", "/v2/CLI.vuln"},
		{"GET", "/v2/Auth/api-key"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			tb := &recTB{TB: t}
			s := Start(tb, nil)
			key := s.AddKey(OrgA, "s")
			send(t, tc.method, s.APIURL()+tc.path, "ApiKey "+key, jsonCT, "{}")
			tw := s.TripWires()
			if len(tw) != 1 || tw[0].Path != tc.path || tw[0].Method != tc.method {
				t.Fatalf("trip-wires: %+v", tw)
			}
			if errs := tb.errors(); len(errs) != 1 || !strings.Contains(errs[0], tc.path) {
				t.Fatalf("test not failed: %q", errs)
			}
		})
	}
	// A GET of the data routes is no trip-wire; neither is a look-alike.
	tb := &recTB{TB: t}
	s := Start(tb, nil)
	key := s.AddKey(OrgA, "s")
	for _, p := range []string{"/v2/authors/vulns", "/v2/vuln/" + Log4Shell, "/health"} {
		send(t, "GET", s.APIURL()+p, "ApiKey "+key, nil, "")
	}
	if len(s.TripWires()) != 0 || len(tb.errors()) != 0 {
		t.Fatalf("false trip-wire: %+v %q", s.TripWires(), tb.errors())
	}
}

// A reached trip-wire also answers as the real route would, so the harm
// is visible in what the client got.
func TestTripWireAnswers(t *testing.T) {
	f := start(t, &Options{TolerateTripWires: true})
	if r := send(t, "GET", f.APIURL()+"/v2/auth/api-key", "ApiKey "+f.key, nil, ""); r.status != 200 || r.str("apiKey") == "" {
		t.Fatalf("api-key: %d %s", r.status, r.raw)
	}
	if r := send(t, "POST", f.APIURL()+"/v2/cli.suppressions", "ApiKey "+f.key, jsonCT, "{}"); r.status != 200 || r.body["written"] != true {
		t.Fatalf("cli write: %d %s", r.status, r.raw)
	}
	if r := send(t, "POST", f.APIURL()+"/v2/cli.suppressions", "", jsonCT, "{}"); r.status != 401 {
		t.Fatalf("unauthenticated cli: %d", r.status)
	}
}

// Reference §3 and §11: error bodies in every shape, and 5xx once then
// success.
func TestErrorShapes(t *testing.T) {
	f := start(t, nil)
	for _, tc := range []struct {
		shape ErrorShape
		ct    string
		check func(r resp) bool
	}{
		{ShapeStandard, "application/json", func(r resp) bool { return r.body["success"] == false && r.str("error") == "boom" }},
		{ShapeErrorOnly, "application/json", func(r resp) bool { _, has := r.body["success"]; return !has && r.str("error") == "boom" }},
		{ShapeV1NotFound, "application/json", func(r resp) bool {
			return r.str("identifier") == Log4Shell && r.body["sourcesAttempted"] != nil
		}},
		{ShapeEmptyError, "application/json", func(r resp) bool { return r.body["success"] == false && r.str("error") == "" }},
		{ShapeNonJSON, "text/plain", func(r resp) bool { return r.body == nil && strings.Contains(string(r.raw), "boom") }},
		{ShapeHTML, "text/html", func(r resp) bool { return strings.Contains(string(r.raw), "<html>") }},
	} {
		f.AddFault(Fault{Kind: FaultError, Times: 1, Status: 404, Shape: tc.shape, Message: "boom"})
		r := f.get(t, "/vuln/"+Log4Shell)
		if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), tc.ct) || !tc.check(r) {
			t.Errorf("shape %d: %d %s %s", tc.shape, r.status, r.header.Get("Content-Type"), r.raw)
		}
	}
	for _, status := range []int{502, 503, 504} {
		f.FailNext(1, status)
		if r := f.get(t, "/sources"); r.status != status {
			t.Fatalf("FailNext %d: %d", status, r.status)
		}
		if r := f.get(t, "/sources"); r.status != 200 {
			t.Fatalf("after FailNext %d: %d", status, r.status)
		}
	}
}

func TestInjection(t *testing.T) {
	f := start(t, nil)
	f.SetInjection(Injection)
	for _, p := range []string{"/vuln/" + Log4Shell, "/vuln/" + Log4Shell + "/exploits", "/vuln/" + Log4Shell + "/workarounds",
		"/vuln/" + Log4Shell + "/advisories", "/vuln/" + Log4Shell + "/snort-rules", "/vuln/" + Log4Shell + "/cwe-guidance",
		"/vuln/" + Log4Shell + "/remediation-plan?includeGuidance=true", "/exploits/6f1c9a7e-0c1e-4b55-9d1a-3f1f6e2a9b01/poc"} {
		r := f.get(t, p)
		// JSON escapes nothing of the sample but may escape the controls.
		var text string
		if r.body != nil {
			b, _ := json.Marshal(r.body)
			text = string(b)
			var round any
			_ = json.Unmarshal(b, &round)
			text = fmt.Sprint(round)
		} else {
			text = string(r.raw)
		}
		if !strings.Contains(text, "IGNORE PREVIOUS INSTRUCTIONS") || !strings.Contains(text, "</untrusted-data>") ||
			!strings.Contains(text, "\u202e") {
			t.Errorf("%s: no injection in %.200s", p, text)
		}
	}
	f.SetInjection("")
	if r := f.get(t, "/vuln/"+Log4Shell); strings.Contains(string(r.raw), "IGNORE") {
		t.Fatal("SetInjection(\"\") did not clear")
	}
}

func TestRedirects(t *testing.T) {
	f := start(t, nil)
	f.AddFault(Fault{Kind: FaultRedirect, Times: 1, Location: "/v2/vuln/" + XZBackdoor})
	if r := f.get(t, "/vuln/"+Log4Shell); r.status != 302 || r.header.Get("Location") != "/v2/vuln/"+XZBackdoor {
		t.Fatalf("same host: %d %v", r.status, r.header)
	}
	if !strings.HasPrefix(f.ElsewhereURL(), "http://127.0.0.2:") {
		t.Skip("127.0.0.2 is not available; the elsewhere host shares the API's host name")
	}
	f.AddFault(Fault{Kind: FaultRedirect, Times: 1, Status: 307, Location: f.ElsewhereURL() + "/collect"})
	r := f.get(t, "/sources")
	if r.status != 307 || r.header.Get("Location") != f.ElsewhereURL()+"/collect" {
		t.Fatalf("off host: %d %v", r.status, r.header)
	}
	// A careless client that re-sends its headers to the Location is caught
	// by the record of the elsewhere host.
	send(t, "GET", r.header.Get("Location"), "ApiKey "+f.key, nil, "")
	last := f.Requests()[len(f.Requests())-1]
	if last.Host != HostElsewhere || last.Path != "/collect" || !last.Contains(f.key) {
		t.Fatalf("elsewhere record: %+v", last)
	}
}

func TestEchoCredential(t *testing.T) {
	f := start(t, nil)
	f.AddFault(Fault{Kind: FaultEchoCredential, Times: 1})
	r := f.get(t, "/vuln/"+Log4Shell)
	if r.status != 200 || !strings.Contains(string(r.raw), f.key) || !strings.Contains(string(r.raw), OrgA) {
		t.Fatalf("echo: %s", r.raw)
	}
}

func TestHTMLAndRaw(t *testing.T) {
	f := start(t, nil)
	f.AddFault(Fault{Kind: FaultHTML, Times: 1})
	r := f.get(t, "/sources")
	if r.status != 502 || !strings.Contains(string(r.raw), "502 Bad Gateway") || r.header.Get("X-VDB-Plan") != "" {
		t.Fatalf("html: %d %v", r.status, r.header)
	}
	f.AddFault(Fault{Kind: FaultRaw, Times: 1, ContentType: "application/json", Body: `{"items":[`})
	if r := f.get(t, "/sources"); r.status != 200 || string(r.raw) != `{"items":[` {
		t.Fatalf("raw: %s", r.raw)
	}
}

// A 60 MiB body streams without the fake holding it; the client can stop.
func TestHugeBody(t *testing.T) {
	f := start(t, nil)
	f.AddFault(Fault{Kind: FaultHuge, Times: 1, DeclareLength: true})
	req, _ := http.NewRequest("GET", f.APIURL()+APIVersion+"/kev", nil)
	req.Header.Set("Authorization", "ApiKey "+f.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.ContentLength != 60<<20 || n != 60<<20 || err != nil {
		t.Fatalf("Content-Length %d, read %d: %v", res.ContentLength, n, err)
	}
	// The same stream, small enough to parse, is valid JSON of exact size.
	f.AddFault(Fault{Kind: FaultHuge, Times: 1, Size: 1 << 20})
	r := f.get(t, "/kev")
	if len(r.raw) != 1<<20 || !json.Valid(r.raw) || r.header.Get("Content-Length") != "" {
		t.Fatalf("1 MiB huge body: %d bytes, valid %v", len(r.raw), json.Valid(r.raw))
	}
}

// A wide body is valid JSON of its size: one object whose "cwe" array
// holds about a million empty objects by default.
func TestWideBody(t *testing.T) {
	f := start(t, nil)
	for _, size := range []int64{0, 1000, 1001, 1002} {
		f.AddFault(Fault{Kind: FaultWide, Times: 1, Size: size})
		r := f.get(t, "/vuln/"+Log4Shell)
		want := size
		if size == 0 {
			want = WideSize
		}
		var v struct{ CWE []struct{} }
		if int64(len(r.raw)) != want || json.Unmarshal(r.raw, &v) != nil || len(v.CWE) < int(want)/3-4 {
			t.Fatalf("wide body of %d: %d bytes, %d objects", want, len(r.raw), len(v.CWE))
		}
	}
}

// Slow and endless bodies stop when the client gives up.
func TestSlowAndEndless(t *testing.T) {
	f := start(t, nil)
	get := func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.APIURL()+APIVersion+"/sources", nil)
		req.Header.Set("Authorization", "ApiKey "+f.key)
		return http.DefaultClient.Do(req)
	}
	f.AddFault(Fault{Kind: FaultSlow, Times: 1, Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := get(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow: %v", err)
	}

	f.AddFault(Fault{Kind: FaultSlowBody, Times: 1, Delay: 20 * time.Millisecond, ChunkSize: 8})
	res, err := get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !json.Valid(b) || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("slow body: %v after %v", json.Valid(b), time.Since(start))
	}

	f.AddFault(Fault{Kind: FaultEndless, Times: 1})
	ctx2, cancel2 := context.WithCancel(context.Background())
	res, err = get(ctx2)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.CopyN(io.Discard, res.Body, 8<<20)
	cancel2()
	res.Body.Close()
	if n != 8<<20 {
		t.Fatalf("endless body ended after %d bytes", n)
	}
}

func TestReset(t *testing.T) {
	f := start(t, nil)
	f.AddFault(Fault{Kind: FaultReset, Times: 1})
	req, _ := http.NewRequest("GET", f.APIURL()+APIVersion+"/sources", nil)
	req.Header.Set("Authorization", "ApiKey "+f.key)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Fatal("no transport error")
	}
	if r := f.get(t, "/sources"); r.status != 200 {
		t.Fatalf("after reset: %d", r.status)
	}
}

// Faults select by host, method and path prefix, and count down.
func TestFaultSelection(t *testing.T) {
	f := start(t, nil)
	f.AddFault(Fault{Kind: FaultError, PathPrefix: "/v2/vuln/", Status: 503, Times: 2})
	if r := f.get(t, "/sources"); r.status != 200 {
		t.Fatal("fault hit another path")
	}
	for range 2 {
		if r := f.get(t, "/vuln/"+Log4Shell); r.status != 503 {
			t.Fatal("fault missed")
		}
	}
	if r := f.get(t, "/vuln/"+Log4Shell); r.status != 200 {
		t.Fatal("fault did not count down")
	}
	f.AddFault(Fault{Kind: FaultHTML, Host: HostSite})
	if r := send(t, "POST", f.SiteURL()+DevicePath+"/authorize", "", jsonCT, "{}"); r.status != 502 {
		t.Fatalf("site fault: %d", r.status)
	}
	if r := f.get(t, "/sources"); r.status != 200 {
		t.Fatal("site fault hit the API")
	}
	f.ClearFaults()
	f.authorize(t)
}

// Options.Latency delays every API answer by the set time, and a request
// whose client goes away stops waiting at once (recorded as
// StatusClientClosed) instead of holding its handler for the whole delay.
func TestLatency(t *testing.T) {
	const d = 60 * time.Millisecond
	f := start(t, &Options{Latency: d})
	get := func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.APIURL()+APIVersion+"/sources", nil)
		req.Header.Set("Authorization", "ApiKey "+f.key)
		return http.DefaultClient.Do(req)
	}
	begin := time.Now()
	res, err := get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if took := time.Since(begin); res.StatusCode != http.StatusOK || took < d {
		t.Fatalf("status %d after %v, want 200 after at least %v", res.StatusCode, took, d)
	}

	slow := start(t, &Options{Latency: time.Hour})
	get = func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", slow.APIURL()+APIVersion+"/sources", nil)
		req.Header.Set("Authorization", "ApiKey "+slow.key)
		return http.DefaultClient.Do(req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := get(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an hour's latency answered: %v", err)
	}
	// The handler returns (and records its status) only when it stops
	// waiting; with the Server still open, only the cancellation can end it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		rs := slow.Requests()
		if len(rs) == 1 && rs[0].Status == StatusClientClosed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the handler still waits after its client went away: %+v", rs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
