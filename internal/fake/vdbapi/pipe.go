package vdbapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
)

// In-memory hosts (Options.InMemory): the addresses APIURL, SiteURL and
// ElsewhereURL name, served over net.Pipe connections that Dial makes.
const (
	memAPIAddr       = "127.0.0.1:20001"
	memSiteAddr      = "127.0.0.1:20002"
	memElsewhereAddr = "127.0.0.2:20003"
)

// errNoHost is Dial's answer for an address the fake does not serve.
var errNoHost = errors.New("vdbapi fake: no in-memory host at this address")

// pipeListener accepts the server ends of the connections Dial makes.
type pipeListener struct {
	addr   pipeAddr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

type pipeAddr string

func (a pipeAddr) Network() string { return "tcp" }
func (a pipeAddr) String() string  { return string(a) }

func newPipeListener(addr string) *pipeListener {
	return &pipeListener{addr: pipeAddr(addr), conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr implements net.Listener.
func (l *pipeListener) Addr() net.Addr { return l.addr }

// inMemory starts h on an in-memory listener at addr.
func (s *Server) inMemory(addr string, h http.Handler) *httptest.Server {
	l := newPipeListener(addr)
	s.pipes[addr] = l
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = l
	ts.Start()
	return ts
}

// Dial connects to the host at addr (the host:port of APIURL, SiteURL or
// ElsewhereURL) of a fake made with Options.InMemory, over an in-memory
// connection: give it to the client as its DialContext
// (upstream.Options.DialContext). A fake on loopback sockets has nothing to
// dial this way.
func (s *Server) Dial(ctx context.Context, _, addr string) (net.Conn, error) {
	l, ok := s.pipes[addr]
	if !ok {
		return nil, errNoHost
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	_ = client.Close()
	_ = server.Close()
	return nil, errNoHost
}
