package vdbapi

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Paths the fake serves (reference §1).
const (
	// APIVersion is the version prefix of the data API, appended by clients
	// to the API base URL ("https://api.vdb.vulnetix.com" + "/v2").
	APIVersion = "/v2"
	// DevicePath is the device-login prefix on the site host: POST
	// DevicePath+"/authorize", "/token" and "/approve".
	DevicePath = "/api/site/v1/cli/device"
	// VerificationPath is the approval page on the site host.
	VerificationPath = "/cli-login-code"
)

// Host labels in Request.Host.
const (
	HostAPI       = "api"       // the data API (APIURL)
	HostSite      = "site"      // the sign-in site (SiteURL)
	HostElsewhere = "elsewhere" // an unrelated host, the target of off-host redirects (ElsewhereURL)
)

// Options configures a Server. The zero value (or nil) is usable.
type Options struct {
	// Now is the clock for rate-limit resets, device-grant expiry and the
	// poll interval; time.Now when nil. Tests inject a manual clock so they
	// never sleep.
	Now func() time.Time
	// DayLimit is each org's daily quota (RateLimit-DayLimit); 1000 when
	// zero; a negative value means "unlimited" on the wire and no 429.
	DayLimit int
	// SoftLimits adds X-Softlimits: true and never answers 429 for quota
	// (scripted 429 faults still fire).
	SoftLimits bool
	// DeviceExpiresIn is the device grant's lifetime; 5 minutes when zero.
	DeviceExpiresIn time.Duration
	// DeviceInterval is the poll interval announced by /authorize and
	// enforced by /token; 5 seconds when zero. It is sent in whole seconds
	// (rounded up) but enforced exactly, so tests with a manual clock may use
	// any value.
	DeviceInterval time.Duration
	// AuthorizeLimit is how many /authorize calls are allowed per 60 s
	// before 429; 12 when zero.
	AuthorizeLimit int
	// TolerateTripWires stops a Server made by Start from failing the test
	// when a trip-wire route is called (the fake's own tests use it). The
	// calls are still recorded with Request.TripWire set.
	TolerateTripWires bool
	// InMemory serves the three hosts over in-memory connections made by
	// Dial, instead of loopback sockets: for tests inside a
	// testing/synctest bubble, where a goroutine waiting on a socket stops
	// the bubble's clock. Create (and Close) such a fake inside the bubble;
	// its URLs name loopback addresses nothing listens on.
	InMemory bool
	// Latency delays every answer of the API host (headers included) by
	// this long, measured on the real clock (not Now), as a network round
	// trip to the real API would: a fixed per-request upstream latency for
	// benchmarks. A request whose client goes away (or whose Server closes)
	// during the wait stops waiting and is recorded with status
	// StatusClientClosed. Zero means none (loopback speed).
	Latency time.Duration
}

// StatusClientClosed is the status recorded for a request abandoned by its
// client during Options.Latency (nginx's 499; nothing reaches the client).
const StatusClientClosed = 499

// Server is the fake VDB API and sign-in site, each on its own loopback
// port, plus a third "elsewhere" host for off-host redirects. It is safe for
// concurrent use. Create it with New (close it yourself) or Start.
type Server struct {
	opts Options
	tb   testing.TB // set by Start: trip-wires fail this test

	api, site, elsewhere *httptest.Server
	done                 chan struct{}
	closeOnce            sync.Once

	mu        sync.Mutex
	requests  []*Request
	orgs      map[string]*org     // by org id
	keys      map[string]string   // ApiKey value "<org>:<hex>" -> org id
	bearers   map[string]string   // bearer token -> org id
	vulns     map[string]*Vuln    // by upper-case id
	big       map[string]int      // upper-case id -> size of a generated huge record
	seen      map[string]bool     // cache keys already served (X-Cache)
	cacheCtl  map[string][]string // path prefix -> Cache-Control lines
	faults    []*faultRule        // hostile switches
	injection string              // appended to every prose field
	grants    map[[32]byte]*grant // by SHA-256 of device_code
	issued    []IssuedGrant
	authorize []time.Time              // /authorize calls in the last 60 s
	pipes     map[string]*pipeListener // Options.InMemory: the hosts by address, for Dial
}

// New starts a fake on three loopback ports. opts may be nil. Call Close
// when done (Start does it for you).
func New(opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.DayLimit == 0 {
		o.DayLimit = 1000
	}
	if o.DeviceExpiresIn <= 0 {
		o.DeviceExpiresIn = 5 * time.Minute
	}
	if o.DeviceInterval <= 0 {
		o.DeviceInterval = 5 * time.Second
	}
	if o.AuthorizeLimit <= 0 {
		o.AuthorizeLimit = 12
	}
	s := &Server{opts: o, done: make(chan struct{}), orgs: map[string]*org{}, keys: map[string]string{},
		bearers: map[string]string{}, vulns: map[string]*Vuln{}, big: map[string]int{},
		seen: map[string]bool{}, cacheCtl: map[string][]string{}, grants: map[[32]byte]*grant{}}
	s.seed()
	if o.InMemory {
		s.pipes = map[string]*pipeListener{}
		s.api = s.inMemory(memAPIAddr, s.handler(HostAPI, s.serveAPI))
		s.site = s.inMemory(memSiteAddr, s.handler(HostSite, s.serveSite))
		s.elsewhere = s.inMemory(memElsewhereAddr, s.handler(HostElsewhere, serveElsewhere))
		return s
	}
	s.api = loopback(s.handler(HostAPI, s.serveAPI))
	s.site = loopback(s.handler(HostSite, s.serveSite))
	s.elsewhere = loopbackAt("127.0.0.2:0", s.handler(HostElsewhere, serveElsewhere))
	return s
}

// Start is New for tests: the fake closes when tb ends, and a call to a
// trip-wire route fails tb (unless Options.TolerateTripWires).
func Start(tb testing.TB, opts *Options) *Server {
	tb.Helper()
	s := New(opts)
	s.tb = tb
	tb.Cleanup(s.Close)
	return s
}

func loopback(h http.Handler) *httptest.Server { return loopbackAt("127.0.0.1:0", h) }

// loopbackAt listens on addr, falling back to 127.0.0.1 (127.0.0.2 is a
// distinct host name for net/http's redirect rules, where it exists).
func loopbackAt(addr string, h http.Handler) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		panic(fmt.Sprintf("vdbapi fake: listen on loopback: %v", err))
	}
	ts.Listener = l
	ts.Start()
	return ts
}

// APIURL is the API base URL without the version, e.g.
// "http://127.0.0.1:40123" (the real one is https://api.vdb.vulnetix.com);
// clients append APIVersion.
func (s *Server) APIURL() string { return s.api.URL }

// SiteURL is the sign-in site's base URL (the real one is
// https://www.vulnetix.com); the device endpoints are under DevicePath.
func (s *Server) SiteURL() string { return s.site.URL }

// ElsewhereURL is a third loopback host that answers 200 {} to anything and
// records it: the target of off-host redirects, to prove a client never
// follows them with its credential. It listens on 127.0.0.2 where the
// system allows (Linux does), so its host name differs from the API's:
// net/http keeps Authorization on a redirect to the same host name even on
// another port.
func (s *Server) ElsewhereURL() string { return s.elsewhere.URL }

// Close ends slow and endless bodies and stops the three servers. It is
// safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.api.CloseClientConnections()
		s.api.Close()
		s.site.Close()
		s.elsewhere.Close()
	})
}

func (s *Server) now() time.Time { return s.opts.Now() }

// Request is one request as the fake received it. Header has the
// Authorization and Cookie values replaced by "<scheme> [redacted]"; use
// Contains to look for a secret anywhere in what was sent.
type Request struct {
	Host     string // HostAPI, HostSite or HostElsewhere
	Method   string
	Path     string // escaped path, as on the wire
	RawQuery string
	Header   http.Header // secrets redacted
	Scheme   string      // "ApiKey", "Bearer", another word, or "" without Authorization
	Org      string      // org id the credential resolved to, "" when it did not
	Status   int         // status answered (0 while the answer is still being written)
	TripWire bool        // a route bulwark must never call (doc.go, "Trip-wires")
	Body     []byte      // request body (site POSTs), as sent

	rawHeader http.Header
}

// Contains reports whether secret appears anywhere in the request: path,
// query, any header value (unredacted) or body.
func (r Request) Contains(secret string) bool {
	if secret == "" {
		return false
	}
	if strings.Contains(r.Path, secret) || strings.Contains(r.RawQuery, secret) ||
		bytes.Contains(r.Body, []byte(secret)) {
		return true
	}
	for _, vs := range r.rawHeader {
		for _, v := range vs {
			if strings.Contains(v, secret) {
				return true
			}
		}
	}
	return false
}

// Requests returns a copy of every request received so far on the three
// hosts, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		c := *r
		c.Header, c.rawHeader, c.Body = r.Header.Clone(), r.rawHeader.Clone(), bytes.Clone(r.Body)
		out[i] = c
	}
	return out
}

// TripWires returns the recorded requests to routes bulwark must never call.
func (s *Server) TripWires() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.TripWire {
			out = append(out, r)
		}
	}
	return out
}

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// maxBodyBytes caps how much of a request body the fake reads.
const maxBodyBytes = 1 << 20

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// handler records every request before serve sees it, and its status after.
func (s *Server) handler(host string, serve func(http.ResponseWriter, *http.Request, *Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
		rec := &Request{Host: host, Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
			Header: redact(r.Header), rawHeader: r.Header.Clone(), Body: body}
		rec.Scheme, _, _ = strings.Cut(r.Header.Get("Authorization"), " ")
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: w}
		serve(sw, r, rec)
		s.mu.Lock()
		rec.Status = sw.status
		s.mu.Unlock()
	})
}

// setRec updates a recorded request under the lock.
func (s *Server) setRec(rec *Request, f func(*Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(rec)
}

func redact(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
		for i, v := range out[k] {
			scheme, _, _ := strings.Cut(v, " ")
			out[k][i] = scheme + " [redacted]"
		}
	}
	return out
}

// tripWire marks rec and fails the test of a Server made by Start.
func (s *Server) tripWire(rec *Request) {
	s.setRec(rec, func(r *Request) { r.TripWire = true })
	if s.tb != nil && !s.opts.TolerateTripWires {
		s.tb.Errorf("vdbapi fake: trip-wire route called: %s %s (%s host)", rec.Method, rec.Path, rec.Host)
	}
}

func serveElsewhere(w http.ResponseWriter, _ *http.Request, _ *Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}\n"))
}
