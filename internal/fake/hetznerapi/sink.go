package hetznerapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Sink is a second loopback server that records what reaches it, e.g. the
// target of a FaultRedirect, to prove a client never forwarded its token.
type Sink struct {
	// URL is the sink's base URL (http://127.0.0.1:PORT).
	URL string

	mu   sync.Mutex
	reqs []Request
}

// StartSink starts a Sink that is closed when the test ends. It answers
// every request with 200 and an empty JSON object.
func StartSink(t testing.TB) *Sink {
	t.Helper()
	k := &Sink{}
	ts := httptest.NewServer(http.HandlerFunc(k.serve))
	k.URL = ts.URL
	t.Cleanup(ts.Close)
	return k
}

func (k *Sink) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := readBody(r)
	k.mu.Lock()
	k.reqs = append(k.reqs, Request{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body})
	k.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}\n"))
}

// Requests returns copies of the requests received so far.
func (k *Sink) Requests() []Request {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]Request, len(k.reqs))
	for i, r := range k.reqs {
		r.Header, r.Body = r.Header.Clone(), bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

// SawAuthorization reports whether any request carried an Authorization
// header.
func (k *Sink) SawAuthorization() bool {
	for _, r := range k.Requests() {
		if r.HadAuth() {
			return true
		}
	}
	return false
}
