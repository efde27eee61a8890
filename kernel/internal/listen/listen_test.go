package listen

import (
	"context"
	"net"
	"net/http"
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
