package listen

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAddr(t *testing.T) {
	for in, want := range map[string]string{
		":8080": "127.0.0.1:8080", "8080": "127.0.0.1:8080", "0.0.0.0:80": "0.0.0.0:80",
		"[::1]:9": "[::1]:9", "localhost:9": "localhost:9", "10.0.0.1:9": "10.0.0.1:9",
	} {
		if got := Addr(in); got != want {
			t.Errorf("Addr(%q) = %q, want %q", in, got, want)
		}
	}
}

// Parse is the one reading of an operator's listen address: -http, the
// metrics listener and -dns-listen all go through it.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{":8080", "127.0.0.1:8080", ""}, // a bare port binds loopback
		{"8080", "127.0.0.1:8080", ""},
		{":0", "127.0.0.1:0", ""},
		{"0.0.0.0:80", "0.0.0.0:80", ""},
		{"[::1]:9", "[::1]:9", ""},
		{"[::]:9", "[::]:9", ""},
		{"localhost:9", "localhost:9", ""},
		{"example.com:443", "example.com:443", ""},
		{"", "", "not an address"},
		{"bogus", "", "not an address"},
		{"notanaddr", "", "not an address"},
		{"[::1", "", "not an address"},
		{"a b:80", "", "not an address"},
		{"a/b:80", "", "not an address"},
		{"+80", "", "not an address"},
		{":", "", "port"},
		{":x", "", "port"},
		{":+80", "", "port"},
		{":-1", "", "port"},
		{":65536", "", "port"},
		{"127.0.0.1:99999", "", "port"},
		{"99999", "", "port"},
	} {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for in, want := range map[string]bool{
		":9090": true, "9090": true, "127.0.0.2:1": true, "[::1]:1": true, "localhost:1": true,
		"0.0.0.0:1": false, "[::]:1": false, "192.0.2.1:1": false, "example.com:1": false,
	} {
		if got := Loopback(in); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", in, got, want)
		}
	}
}

// Serve returns once its context ends, after the server has shut down.
func TestServeStopsWithTheContext(t *testing.T) {
	ln, err := net.Listen("tcp", Addr(":0"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, &http.Server{Handler: http.NotFoundHandler()}, ln, time.Second) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("the listener is still open")
	}
}
