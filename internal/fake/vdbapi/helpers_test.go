package vdbapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a manual clock for the device grant and the quota day.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// resp is a decoded answer.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r resp) str(k string) string {
	s, _ := r.body[k].(string)
	return s
}

func (r resp) items() []any {
	it, _ := r.body["items"].([]any)
	return it
}

// fixture is a started fake with a key for OrgA and a bearer for OrgB.
type fixture struct {
	*Server
	clock  *clock
	key    string // ApiKey value for OrgA
	bearer string // Bearer token for OrgB
}

func start(t *testing.T, opts *Options) *fixture {
	t.Helper()
	c := newClock()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = c.Now
	}
	s := Start(t, &o)
	f := &fixture{Server: s, clock: c, key: s.AddKey(OrgA, "secret-a"), bearer: "tok-b"}
	s.AddBearer(OrgB, f.bearer)
	return f
}

// send issues a request; auth is the whole Authorization value ("" none).
func send(t *testing.T, method, url, auth string, hdr map[string]string, body string) resp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) < 1<<20 { // big records are checked by their tests
		_ = json.Unmarshal(raw, &r.body)
	}
	return r
}

// get is an authenticated GET of an API path under /v2 as OrgA.
func (f *fixture) get(t *testing.T, path string) resp {
	t.Helper()
	return send(t, "GET", f.APIURL()+APIVersion+path, "ApiKey "+f.key, nil, "")
}
