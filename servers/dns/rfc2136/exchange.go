package rfc2136

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// fudge is the TSIG fudge of our messages (RFC 8945 §10: 300 seconds).
const fudge = 300

// conn is one TCP connection to the server: messages signed with the key,
// answers verified against it, closed when the call's context ends.
type conn struct {
	p    *Provider
	co   *mdns.Conn
	stop func() bool
	mac  string // the MAC of the last message, for the next verification
	// timersOnly: messages after the first of a transfer are verified
	// with the timers only (RFC 8945 §5.3.1).
	timersOnly bool
	buf        []byte
}

// dial connects to the server for one exchange or transfer.
func (p *Provider) dial(ctx context.Context) (*conn, error) {
	d := net.Dialer{Timeout: p.opts.Timeout}
	c, err := d.DialContext(ctx, "tcp", p.opts.Server)
	if err != nil {
		return nil, p.netError(ctx, err)
	}
	cn := &conn{p: p, co: &mdns.Conn{Conn: c}, buf: make([]byte, mdns.MaxMsgSize)}
	cn.stop = context.AfterFunc(ctx, func() { c.Close() })
	return cn, nil
}

func (c *conn) close() {
	c.stop()
	c.co.Close()
}

// send signs m with the key and writes it.
func (c *conn) send(m *mdns.Msg) error {
	k := c.p.opts.Key
	m.SetTsig(k.Name(), k.WireAlgorithm(), fudge, time.Now().Unix())
	b, mac, err := mdns.TsigGenerateWithProvider(m, c.p.ring, "", false)
	if err != nil {
		return fmt.Errorf("rfc2136: signing: %w", err)
	}
	c.mac = mac
	_ = c.co.SetWriteDeadline(time.Now().Add(c.p.opts.Timeout))
	if _, err := c.co.Write(b); err != nil {
		return err
	}
	return nil
}

// recv reads the next message and checks that it answers id and carries a
// valid signature of the key. An answer that says the server refused our
// signature is tsig_rejected.
func (c *conn) recv(id uint16) (*mdns.Msg, int, error) {
	_ = c.co.SetReadDeadline(time.Now().Add(c.p.opts.Timeout))
	n, err := c.co.Read(c.buf)
	if err != nil {
		return nil, 0, err
	}
	raw := c.buf[:n]
	m := new(mdns.Msg)
	if err := m.Unpack(raw); err != nil {
		return nil, n, upstreamMalformed("the server's answer does not parse")
	}
	if m.Id != id || !m.Response {
		return nil, n, upstreamMalformed("the server's answer does not answer the request")
	}
	t := m.IsTsig()
	switch {
	case t != nil && t.Error != 0 || m.Rcode == mdns.RcodeNotAuth && t != nil && t.MACSize == 0:
		return nil, n, &dns.Error{Status: 401, Code: "tsig_rejected", Message: "the server did not accept the TSIG signature (" + tsigError(t.Error) + ")"}
	case t == nil:
		return nil, n, &dns.Error{Status: 502, Code: "bad_signature", Message: "the server's answer is not signed with the key"}
	}
	if err := mdns.TsigVerifyWithProvider(raw, c.p.ring, c.mac, c.timersOnly); err != nil {
		return nil, n, &dns.Error{Status: 502, Code: "bad_signature", Message: "the server's answer failed the TSIG check: " + err.Error()}
	}
	c.mac = t.MAC
	return m, n, nil
}

// exchange sends m and returns the verified answer.
func (p *Provider) exchange(ctx context.Context, m *mdns.Msg) (*mdns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	c, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.send(m); err != nil {
		return nil, p.netError(ctx, err)
	}
	in, _, err := c.recv(m.Id)
	if err != nil {
		return nil, p.netError(ctx, err)
	}
	return in, nil
}

// netError turns a failure of the connection into what the tools report:
// the caller's own cancellation as it is, a deadline as a timeout, the
// rest as a transport failure. A *dns.Error passes unchanged.
func (p *Provider) netError(ctx context.Context, err error) error {
	var pe *dns.Error
	switch {
	case errors.As(err, &pe):
		return err
	case errors.Is(err, upstream.ErrMalformedResponse):
		return err
	case errors.Is(ctx.Err(), context.Canceled):
		return ctx.Err()
	case ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w: the DNS server %s did not answer in time", upstream.ErrTimeout, p.opts.Server)
	}
	return fmt.Errorf("%w: the DNS server %s: %v", upstream.ErrTransport, p.opts.Server, err)
}

func upstreamMalformed(msg string) error {
	return fmt.Errorf("%w: %s", upstream.ErrMalformedResponse, msg)
}

// tsigError names a TSIG error code (RFC 8945 §4.3).
func tsigError(code uint16) string {
	switch code {
	case mdns.RcodeBadSig:
		return "BADSIG: the signature did not verify"
	case mdns.RcodeBadKey:
		return "BADKEY: the server does not know the key"
	case mdns.RcodeBadTime:
		return "BADTIME: the clocks differ by more than the fudge"
	case mdns.RcodeBadTrunc:
		return "BADTRUNC"
	case 0:
		return "NOTAUTH"
	}
	return fmt.Sprintf("TSIG error %d", code)
}

// rcodeName is an rcode's mnemonic.
func rcodeName(rc int) string {
	if s, ok := mdns.RcodeToString[rc]; ok {
		return s
	}
	return fmt.Sprintf("RCODE%d", rc)
}
