package taint

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// Session says how a harness's client runs: its protocol version, its
// options (the relayed questions' answers) and what it does once
// connected. Header is sent with every HTTP request.
type Session struct {
	Version  string
	Options  *mcp.ClientOptions
	Header   http.Header
	Exercise func(t *testing.T, cs *mcp.ClientSession)
}

// Buffer is what a client read, written by its transport.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Bytes returns a copy of what was written.
func (l *Buffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// OverStdio runs s over OS pipes against ks.ServeStdioWith (the fast path
// unless disableFastPath) and checks every line the client read with c.
func OverStdio(t *testing.T, ks *kernel.Server, s Session, disableFastPath bool, c *Checker) {
	t.Helper()
	inR, inW, outR, outW := stdioPipes(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ks.ServeStdioWith(ctx, inR, outW, kernel.StdioOptions{DisableFastPath: disableFastPath})
	}()
	var raw Buffer
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "taint", Version: "1"}, s.Options).Connect(ctx,
		&mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(outR, &raw)), Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: s.Version})
	if err != nil {
		cancel()
		t.Fatalf("stdio connect: %v", err)
	}
	s.Exercise(t, cs)
	cs.Close()
	cancel()
	inW.Close()
	<-done
	outR.Close()
	c.Lines(raw.Bytes())
}

// recorder keeps every response body a client read.
type recorder struct {
	header http.Header
	mu     sync.Mutex
	bodies []struct {
		ct string
		b  []byte
	}
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	for k, v := range r.header {
		req.Header[k] = v
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.mu.Lock()
	r.bodies = append(r.bodies, struct {
		ct string
		b  []byte
	}{resp.Header.Get("Content-Type"), b})
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, err
}

// OverHTTP runs s over Streamable HTTP on loopback and checks every body
// the client read with c.
func OverHTTP(t *testing.T, ks *kernel.Server, s Session, c *Checker) {
	t.Helper()
	endpoint := mcptest.ServeHTTP(t, ks, kernel.HTTPOptions{})
	rec := &recorder{header: s.Header}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "taint", Version: "1"}, s.Options).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: rec}}, &mcp.ClientSessionOptions{ProtocolVersion: s.Version})
	if err != nil {
		t.Fatalf("http connect: %v", err)
	}
	s.Exercise(t, cs)
	cs.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, b := range rec.bodies {
		c.Body(b.ct, b.b)
	}
}

// stdioPipes are a stdio server's two pipes: the client writes inW, the
// server reads inR and writes outW, the client reads outR.
func stdioPipes(t *testing.T) (inR, inW, outR, outW *os.File) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return inR, inW, outR, outW
}
