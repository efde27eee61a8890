package hetznerapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultToken is the read-write token when Options.Token is empty.
const DefaultToken = "fake-hcloud-token"

// BasePath is the path prefix of every endpoint, as in https://api.hetzner.cloud/v1.
const BasePath = "/v1"

// maxBodyBytes caps how much of a request body the fake reads.
const maxBodyBytes = 8 << 20

// Options configures a Server. The zero value (or nil) is usable.
type Options struct {
	// Token is the Read & Write token; DefaultToken when empty.
	Token string
	// ReadOnlyToken, when set, is a Read token: GETs work, anything else
	// answers 401 token_readonly.
	ReadOnlyToken string
	// ActionPolls is how many GETs of an action it takes to finish it: the
	// mutation's own answer always shows "running", and the ActionPolls-th
	// GET shows the final status. Zero means 1.
	ActionPolls int
	// ManualActions keeps every action running until CompleteActions (or
	// FinishAction) is called; GETs do not advance them.
	ManualActions bool
	// LockWhileRunning makes a mutation of a zone that still has a running
	// action answer 423 locked.
	LockWhileRunning bool
	// RejectPerPageOverMax answers 422 invalid_input for a per_page above the
	// endpoint's maximum instead of clamping it (reference §2.3 [?]).
	RejectPerPageOverMax bool
	// RateLimit is the RateLimit-Limit per hour; 3600 when zero. The bucket
	// is real: a test making more requests than that quickly gets 429s.
	RateLimit int
	// DisableRateLimit keeps the headers but never spends the bucket, for
	// benchmarks; RateLimitNext still works.
	DisableRateLimit bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Server is the fake Hetzner Cloud DNS API. It is an http.Handler and safe
// for concurrent use. Create it with New or Start.
type Server struct {
	opts Options

	mu         sync.Mutex
	zones      map[int64]*zone
	nextZone   int64
	actions    map[int64]*action
	runningN   map[int64]int // running actions per zone
	nextAction int64
	scripts    []ActionOutcome
	seq        int64
	requests   []Request
	faults     []*faultRule
	rate       rateState
	corr       uint64
	url        string
	done       chan struct{}
	closeOnce  sync.Once
}

// New returns a fake with empty state. opts may be nil.
func New(opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Token == "" {
		o.Token = DefaultToken
	}
	if o.ActionPolls <= 0 {
		o.ActionPolls = 1
	}
	if o.RateLimit <= 0 {
		o.RateLimit = 3600
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{opts: o, zones: map[int64]*zone{}, actions: map[int64]*action{}, runningN: map[int64]int{},
		nextZone: 1000, nextAction: 9000000, done: make(chan struct{})}
	s.rate.remaining = float64(o.RateLimit)
	return s
}

// Start runs a fake on a loopback httptest.Server that is closed when the
// test ends. URL returns its base URL (http://127.0.0.1:PORT/v1).
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	s := New(opts)
	ts := httptest.NewServer(s)
	s.mu.Lock()
	s.url = ts.URL + BasePath
	s.mu.Unlock()
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s
}

// URL is the base URL of a fake made by Start, "" otherwise.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Token is the Read & Write token the fake accepts.
func (s *Server) Token() string { return s.opts.Token }

// Close releases handlers that are sleeping in a slow fault.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
}

func (s *Server) now() time.Time { return s.opts.Now().UTC().Truncate(time.Second) }

// Request is one request as the fake received it.
type Request struct {
	Method   string
	Path     string // escaped path, as on the wire
	RawQuery string
	Header   http.Header
	Body     []byte
}

// Authorization is the Authorization header value ("" when absent).
func (r Request) Authorization() string { return r.Header.Get("Authorization") }

// HadAuth reports whether the request carried an Authorization header.
func (r Request) HadAuth() bool { return len(r.Header.Values("Authorization")) > 0 }

// Query parses RawQuery.
func (r Request) Query() url.Values {
	q, _ := url.ParseQuery(r.RawQuery)
	return q
}

// HasField reports whether the JSON body is an object with a top-level key
// name, e.g. to assert that an "admin" field never reached the API.
func (r Request) HasField(name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(r.Body, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		r.Body = bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, tooBig := readBody(r)
	s.record(r, body)
	f := s.takeFault(r)
	if f != nil && f.Kind == FaultSlow && !s.wait(r.Context(), f.Delay) {
		return
	}
	if f != nil && f.proxyLike() {
		if f.AfterApply {
			s.mu.Lock()
			_, _, _ = s.handle(httptest.NewRecorder(), r, body, tooBig, nil)
			s.mu.Unlock()
		}
		s.writeProxy(w, r, f)
		return
	}
	s.mu.Lock()
	status, v, aerr := s.handle(w, r, body, tooBig, f)
	s.mu.Unlock()
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	writeJSON(w, status, v)
}

func readBody(r *http.Request) ([]byte, bool) {
	if r.Body == nil {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil || len(b) > maxBodyBytes {
		return b, true
	}
	return b, false
}

func (s *Server) record(r *http.Request, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(),
		RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: bytes.Clone(body)})
}

// handle runs one API request under s.mu; it sets headers on w but writes
// no body. A FaultError fault replaces the answer after auth.
func (s *Server) handle(w http.ResponseWriter, r *http.Request, body []byte, tooBig bool, f *Fault) (int, any, *apiError) {
	s.corr++
	w.Header().Set("X-Correlation-Id", fmt.Sprintf("%016x", s.corr))
	if e := s.rateLimit(w); e != nil {
		return 0, nil, e
	}
	if e := s.authenticate(r); e != nil {
		return 0, nil, e
	}
	if f != nil && f.Kind == FaultError && !f.AfterApply {
		return 0, nil, faultError(f)
	}
	c, e := s.newCall(w, r, body, tooBig)
	if e != nil {
		return 0, nil, e
	}
	status, v, e := c.h(s, c)
	if f != nil && f.Kind == FaultError {
		return 0, nil, faultError(f)
	}
	return status, v, e
}

func faultError(f *Fault) *apiError {
	e := newError(orString(f.Code, CodeServerError), orString(f.Message, "injected failure"))
	if f.Status != 0 {
		e.status = f.Status
	}
	return e
}

func (s *Server) authenticate(r *http.Request) *apiError {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	switch {
	case ok && tok == s.opts.Token:
		return nil
	case ok && s.opts.ReadOnlyToken != "" && tok == s.opts.ReadOnlyToken:
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return nil
		}
		return newError(CodeTokenReadonly, "the token you are using is read-only")
	}
	return newError(CodeUnauthorized, "unable to authenticate")
}
