// Package listen holds what every listener does alike: a bare port binds
// loopback, and a server runs until its context ends, then shuts down within
// a grace period. The MCP endpoint, the metrics listener, the command line's
// -http and the DNS responder's -dns-listen all read addresses here, so the
// loopback default cannot drift apart between them.
package listen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse checks an operator's listen address — PORT, :PORT or HOST:PORT,
// with a port from 0 to 65535 — and returns it as Addr does: a bare port
// binds 127.0.0.1. The error says what is wrong, without the caller's flag
// name.
func Parse(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil && addr != "" && strings.Trim(addr, "0123456789") == "" {
		host, port, err = "", addr, nil // a bare port
	}
	if err != nil || strings.ContainsAny(host, " /") {
		return "", fmt.Errorf("%q is not an address: want :port or host:port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n > 65535 || strings.Trim(port, "0123456789") != "" {
		return "", fmt.Errorf("%q: the port must be a number from 0 to 65535", addr)
	}
	return Addr(addr), nil
}

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
// down, giving requests in flight up to grace to finish. When it returns,
// ln is closed.
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
	err := srv.Shutdown(shutdown)
	// Shutdown closes the listeners srv.Serve has taken; if ctx ended
	// before srv.Serve ran, it runs now, sees the shutdown and closes ln
	// itself. Either way it returns at once.
	<-errc
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
