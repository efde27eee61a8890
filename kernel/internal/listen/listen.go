// Package listen holds what every listener of the kernel does alike: a bare
// port binds loopback, and a server runs until its context ends, then shuts
// down within a grace period. The MCP endpoint and the metrics listener both
// use it, so the loopback default and the shutdown cannot drift apart.
package listen

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Addr defaults the host to 127.0.0.1: a listener is loopback unless the
// operator names another interface (":8080" and "8080" bind 127.0.0.1).
func Addr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return net.JoinHostPort("127.0.0.1", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// Loopback reports whether addr, after Addr, binds only loopback.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(Addr(addr))
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve runs srv on ln until ctx ends or the server fails, then shuts it
// down, giving requests in flight up to grace to finish.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
