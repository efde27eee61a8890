package hetznerapi

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestAuth(t *testing.T) {
	s := Start(t, &Options{Token: "rw", ReadOnlyToken: "ro"})
	cases := []struct {
		name, auth, method, path string
		status                   int
		code                     string
	}{
		{"no header", "", "GET", "/zones", 401, CodeUnauthorized},
		{"unknown token", "Bearer nope", "GET", "/zones", 401, CodeUnauthorized},
		{"not bearer", "rw", "GET", "/zones", 401, CodeUnauthorized},
		{"lowercase scheme", "bearer rw", "GET", "/zones", 401, CodeUnauthorized},
		{"read-write get", "Bearer rw", "GET", "/zones", 200, ""},
		{"read-only get", "Bearer ro", "GET", "/zones", 200, ""},
		{"read-only post", "Bearer ro", "POST", "/zones", 401, CodeTokenReadonly},
		{"read-only delete", "Bearer ro", "DELETE", "/zones/1", 401, CodeTokenReadonly},
		{"read-only put", "Bearer ro", "PUT", "/zones/1", 401, CodeTokenReadonly},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want(t, doTok(t, s, c.auth, c.method, c.path, nil), c.status, c.code)
		})
	}
}

func TestLegacyHeaderIsUnauthorized(t *testing.T) {
	s := Start(t, nil)
	r := doTok(t, s, "", "GET", "/zones", nil)
	want(t, r, 401, CodeUnauthorized)
}

func TestErrorShape(t *testing.T) {
	s := Start(t, nil)
	r := do(t, s, "GET", "/zones/4711", nil)
	want(t, r, 404, CodeNotFound)
	if r.header.Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", r.header.Get("Content-Type"))
	}
	e := r.body["error"].(map[string]any)
	if _, ok := e["details"]; !ok || e["details"] != nil {
		t.Errorf("details must be present and null: %s", r.raw)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("empty message: %s", r.raw)
	}
	r = do(t, s, "POST", "/zones", map[string]any{"name": "example.com", "mode": "primary", "ttl": 10})
	want(t, r, 422, CodeInvalidInput)
	f := r.get("error.details").(map[string]any)["fields"].([]any)[0].(map[string]any)
	if f["name"] != "ttl" || len(f["messages"].([]any)) != 1 {
		t.Errorf("details.fields: %s", r.raw)
	}
}

func TestRouting(t *testing.T) {
	s, _ := newPrimary(t, nil)
	mustRRSet(t, s, "example.com", RRSetSeed{Name: "@", Type: "A", Records: recs("198.51.100.1")})
	mustRRSet(t, s, "example.com", RRSetSeed{Name: "*", Type: "A", Records: recs("198.51.100.2")})
	cases := []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"GET", "/zones/example.com/rrsets/@/A", nil, 200, ""},
		{"GET", "/zones/example.com/rrsets/%40/A", nil, 404, CodeNotFound},
		{"GET", "/zones/example.com/rrsets/*/A", nil, 200, ""},
		{"GET", "/zones/example.com/rrsets/%2A/A", nil, 404, CodeNotFound},
		{"GET", "/zones/example.com/rrsets/@/a", nil, 404, CodeNotFound},
		{"POST", "/zones/example.com/rrsets/%40/A/actions/add_records",
			map[string]any{"records": recs("198.51.100.3")}, 422, CodeInvalidInput},
		{"GET", "/zones/EXAMPLE.COM", nil, 404, CodeNotFound},
		{"GET", "/zones/", nil, 404, CodeNotFound},
		{"GET", "/nothing", nil, 404, CodeNotFound},
		{"PATCH", "/zones", nil, 405, CodeMethodNotAllowed},
		{"POST", "/zones/example.com/actions/reboot", nil, 404, CodeNotFound},
		{"POST", "/zones/example.com/rrsets/@/A/actions/explode", nil, 404, CodeNotFound},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			want(t, do(t, s, c.method, c.path, c.body), c.status, c.code)
		})
	}
	if r := do(t, s, "PATCH", "/zones", nil); r.header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow = %q", r.header.Get("Allow"))
	}
}

func TestBodyErrors(t *testing.T) {
	s, _ := newPrimary(t, nil)
	want(t, do(t, s, "POST", "/zones", `{"name":`), 400, CodeJSONError)
	want(t, do(t, s, "POST", "/zones", `[1,2]`), 400, CodeJSONError)
	r := do(t, s, "POST", "/zones/example.com/actions/change_ttl", `{"ttl":"600"}`)
	want(t, r, 422, CodeInvalidInput)
	if r.str("error.details.fields") != "" || r.get("error.details") == nil {
		t.Errorf("want details.fields: %s", r.raw)
	}
}

func TestUnknownFieldsIgnoredAndRecorded(t *testing.T) {
	s, _ := newPrimary(t, nil)
	r := do(t, s, "POST", "/zones/example.com/rrsets", map[string]any{
		"name": "www", "type": "A", "records": recs("198.51.100.7"), "admin": true})
	want(t, r, 201, "")
	reqs := s.Requests()
	last := reqs[len(reqs)-1]
	if !last.HasField("admin") || last.HasField("nope") || !last.HadAuth() ||
		last.Authorization() != "Bearer "+s.Token() || last.Method != "POST" ||
		last.Path != "/v1/zones/example.com/rrsets" {
		t.Errorf("recorded %+v", last)
	}
	s.ResetRequests()
	doTok(t, s, "", "GET", "/zones?name=x", nil)
	reqs = s.Requests()
	if len(reqs) != 1 || reqs[0].HadAuth() || reqs[0].Query().Get("name") != "x" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestRateLimitHeaders(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := Start(t, &Options{RateLimit: 3, Now: clock})
	for i, path := range []string{"/zones", "/zones/404", "/nothing"} {
		r := do(t, s, "GET", path, nil)
		if r.header.Get("RateLimit-Limit") != "3" || r.header.Get("RateLimit-Remaining") != strconv.Itoa(2-i) ||
			r.header.Get("X-Correlation-Id") == "" {
			t.Fatalf("request %d headers %v", i, r.header)
		}
		if got := r.header.Get("RateLimit-Reset"); got != strconv.FormatInt(now.Unix()+int64(1200*(i+1)), 10) {
			t.Errorf("request %d reset %s", i, got)
		}
	}
	r := do(t, s, "GET", "/zones", nil)
	want(t, r, 429, CodeRateLimitExceeded)
	if r.header.Get("RateLimit-Remaining") != "0" {
		t.Errorf("remaining %q", r.header.Get("RateLimit-Remaining"))
	}
	mu.Lock()
	now = now.Add(1200 * time.Second) // refills 1 at 3/hour
	mu.Unlock()
	want(t, do(t, s, "GET", "/zones", nil), 200, "")
}

func TestRateLimitNext(t *testing.T) {
	s := Start(t, nil)
	reset := time.Unix(1_900_000_000, 0)
	s.RateLimitNext(2, reset)
	for range 2 {
		r := do(t, s, "GET", "/zones", nil)
		want(t, r, 429, CodeRateLimitExceeded)
		if r.header.Get("RateLimit-Reset") != "1900000000" || r.header.Get("RateLimit-Remaining") != "0" {
			t.Errorf("headers %v", r.header)
		}
	}
	r := do(t, s, "GET", "/zones", nil)
	want(t, r, 200, "")
	if r.header.Get("RateLimit-Remaining") != "3599" {
		t.Errorf("remaining %q", r.header.Get("RateLimit-Remaining"))
	}
	s.SetRateLimitRemaining(0)
	want(t, do(t, s, "GET", "/zones", nil), 429, CodeRateLimitExceeded)

	off := Start(t, &Options{RateLimit: 1, DisableRateLimit: true})
	for range 3 {
		if r := do(t, off, "GET", "/zones", nil); r.status != 200 || r.header.Get("RateLimit-Remaining") != "1" {
			t.Fatalf("disabled limit: %d %v", r.status, r.header)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	s, _ := newPrimary(t, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := "h" + strconv.Itoa(i)
			do(t, s, "POST", "/zones/example.com/rrsets/"+name+"/A/actions/add_records",
				map[string]any{"records": recs("198.51.100.9")})
			do(t, s, "GET", "/zones/example.com/rrsets", nil)
			s.Requests()
			s.CompleteActions()
		})
	}
	wg.Wait()
	if n := len(s.RRSets("example.com")); n != 10 {
		t.Errorf("rrsets %d, want 10", n)
	}
}
