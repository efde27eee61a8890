package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testToken = "tok-DISTINCTIVE-7f3a9c"

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func authReq(t *testing.T, method, raw string) *Request {
	return &Request{Method: method, URL: mustURL(t, raw), Header: http.Header{"Authorization": {"Bearer " + testToken}}}
}

func assertClean(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range append(secrets, testToken) {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error text %q contains %q", err, s)
		}
	}
}

func TestClientRefusesRedirects(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			stolen.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer thief.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			var hits atomic.Int32
			origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				http.Redirect(w, r, thief.URL+"/steal?q=secretquery", code)
			}))
			defer origin.Close()
			c := New(&Options{Retry: RetryPolicy{MaxAttempts: 4}})
			_, err := c.Do(t.Context(), authReq(t, "GET", origin.URL+"/v1/zones"))
			if !errors.Is(err, ErrRedirect) {
				t.Fatalf("err = %v, want ErrRedirect", err)
			}
			assertClean(t, err, "secretquery", thief.URL)
			if hits.Load() != 1 {
				t.Errorf("origin got %d requests, want 1 (redirects are not retried)", hits.Load())
			}
		})
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the redirect target received the token %d times", n)
	}
}

func TestClientTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slowHeaders := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slowHeaders.Close()
	slowBody := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(200)
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slowBody.Close()
	for name, srv := range map[string]*httptest.Server{"headers": slowHeaders, "body": slowBody} {
		t.Run(name, func(t *testing.T) {
			c := New(&Options{Timeout: 50 * time.Millisecond})
			start := time.Now()
			_, err := c.Do(t.Context(), authReq(t, "GET", srv.URL+"/x?q=secretquery"))
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("took %v; the 50ms timeout did not bound the call", el)
			}
			assertClean(t, err, "secretquery", srv.URL)
		})
	}
	t.Run("caller cancel is not a timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		_, err := New(nil).Do(ctx, authReq(t, "GET", slowHeaders.URL))
		if errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded and not ErrTimeout", err)
		}
	})
}

// streamServer answers n bytes of body in 64 KiB chunks without a
// Content-Length, unless declare is set.
func streamServer(status int, n int64, declare bool) *httptest.Server {
	chunk := []byte(strings.Repeat("a", 64<<10))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if declare {
			w.Header().Set("Content-Length", fmt.Sprint(n))
		}
		w.WriteHeader(status)
		for sent := int64(0); sent < n; {
			k := min(int64(len(chunk)), n-sent)
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			sent += k
		}
	}))
}

func TestClientBodyCap(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name    string
		status  int
		size    int64
		declare bool
		wantErr error
		wantLen int
		trunc   bool
	}{
		{"50MB streamed", 200, 50 * mib, false, ErrResponseTooLarge, 0, false},
		{"50MB declared", 200, 50 * mib, true, ErrResponseTooLarge, 0, false},
		{"cap+1", 200, mib + 1, false, ErrResponseTooLarge, 0, false},
		{"exactly cap", 200, mib, false, nil, mib, false},
		{"error body cut", 500, 50 * mib, false, nil, 4096, true},
		{"small error body", 404, 10, true, nil, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := streamServer(tt.status, tt.size, tt.declare)
			defer srv.Close()
			c := New(&Options{MaxBodyBytes: mib, MaxErrorBodyBytes: 4096, Retry: RetryPolicy{MaxAttempts: 1}})
			resp, err := c.Do(t.Context(), authReq(t, "GET", srv.URL))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Body) != tt.wantLen || resp.Truncated != tt.trunc {
				t.Errorf("body %d bytes, truncated %v; want %d, %v", len(resp.Body), resp.Truncated, tt.wantLen, tt.trunc)
			}
		})
	}
}

func TestClientBodyCapBoundsMemory(t *testing.T) {
	srv := streamServer(200, 50<<20, false)
	defer srv.Close()
	c := New(&Options{MaxBodyBytes: 1 << 20})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := c.Do(t.Context(), authReq(t, "GET", srv.URL))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("err = %v, want ErrResponseTooLarge", err)
	}
	// The server side allocates little (one reused chunk); the client must
	// not have buffered anything near 50 MB.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("allocated %d MiB reading a 50 MiB body with a 1 MiB cap", grew>>20)
	}
}

func TestClientHeadersAndTrace(t *testing.T) {
	var got http.Header
	var uri string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, uri = r.Header.Clone(), r.RequestURI
	}))
	defer srv.Close()
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	c := New(nil)

	req := authReq(t, "GET", srv.URL)
	req.Header.Set("Traceparent", "00-forged")
	if _, err := c.Do(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if got.Get("Traceparent") != "" || got.Get("User-Agent") != defaultUserAgent {
		t.Errorf("without a trace in ctx: traceparent %q, user-agent %q", got.Get("Traceparent"), got.Get("User-Agent"))
	}

	ctx := WithTrace(t.Context(), tp, "a=b")
	if _, err := c.Do(ctx, authReq(t, "GET", srv.URL)); err != nil {
		t.Fatal(err)
	}
	if got.Get("Traceparent") != tp || got.Get("Tracestate") != "a=b" {
		t.Errorf("trace headers %q %q, want %q %q", got.Get("Traceparent"), got.Get("Tracestate"), tp, "a=b")
	}

	u := mustURL(t, srv.URL)
	u.Path, u.RawPath = "/v1/zones/example.com/rrsets/*/A", "/v1/zones/example.com/rrsets/*/A"
	if _, err := c.Do(t.Context(), &Request{URL: u}); err != nil {
		t.Fatal(err)
	}
	if uri != "/v1/zones/example.com/rrsets/*/A" {
		t.Errorf("wire path %q, want the RawPath verbatim", uri)
	}
}

func TestClientMeter(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if n.Add(1) == 1 {
			w.WriteHeader(503)
			w.Write([]byte("busy"))
			return
		}
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	c := New(&Options{Sleep: func(context.Context, time.Duration) error { return nil }})
	ctx, m := WithMeter(t.Context())
	req := authReq(t, "PUT", srv.URL)
	req.Body, req.Idempotent = []byte("12345678"), true
	if _, err := c.Do(ctx, req); err != nil {
		t.Fatal(err)
	}
	want := MeterStats{Calls: 2, Retries: 1, BytesOut: 16, BytesIn: 9}
	if got := m.Stats(); got != want {
		t.Errorf("meter = %+v, want %+v", got, want)
	}
	if (*Meter)(nil).Stats() != (MeterStats{}) || MeterFrom(t.Context()) != nil {
		t.Error("nil meter misbehaves")
	}
}

func TestClientScopedTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	tests := []struct {
		name string
		opts *Options
		ok   bool
	}{
		{"system roots refuse a self-signed cert", nil, false},
		{"RootCAs trusts it", &Options{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}, true},
		{"InsecureSkipVerify on this client", &Options{InsecureSkipVerify: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts).Do(t.Context(), authReq(t, "GET", srv.URL))
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrTransport) {
				t.Errorf("err = %v, want ErrTransport", err)
			}
		})
	}
	if tc := http.DefaultTransport.(*http.Transport).TLSClientConfig; tc != nil && tc.InsecureSkipVerify {
		t.Fatal("InsecureSkipVerify leaked into http.DefaultTransport")
	}
	_, err := http.Get(srv.URL)
	if err == nil {
		t.Fatal("http.DefaultClient trusted the self-signed certificate")
	}
}

func TestClientTransportErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = New(nil).Do(t.Context(), authReq(t, "GET", "http://"+addr+"/v1?q=secretquery"))
	if !errors.Is(err, ErrTransport) {
		t.Fatalf("err = %v, want ErrTransport", err)
	}
	assertClean(t, err, "secretquery", "/v1")

	for name, req := range map[string]*Request{
		"nil":          nil,
		"no url":       {},
		"lower method": {Method: "get", URL: mustURL(t, "http://127.0.0.1/")},
		"bad method":   {Method: "GET /x", URL: mustURL(t, "http://127.0.0.1/")},
	} {
		if _, err := New(nil).Do(t.Context(), req); !errors.Is(err, ErrRequest) {
			t.Errorf("%s: err = %v, want ErrRequest", name, err)
		}
	}
}

// TestNoProxy: a client with NoProxy never asks the environment for a
// proxy (it connects directly); the default client does.
func TestNoProxy(t *testing.T) {
	if New(&Options{NoProxy: true}).transport.Proxy != nil {
		t.Fatal("NoProxy: the transport has a proxy function")
	}
	if New(nil).transport.Proxy == nil {
		t.Fatal("the default transport ignores the proxy environment")
	}
}
