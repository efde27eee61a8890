package upstream

import (
	"io"
	"net/http"
)

// HTTPClient returns an *http.Client over this client's own hardened
// transport, for a protocol library that drives HTTP itself (an MCP
// Streamable HTTP client): redirects are refused, TLS settings stay on this
// client's transport, and every response body is read through the success
// cap (MaxBodyBytes) — a longer body fails with ErrResponseTooLarge. It sets
// no overall timeout, since a response may be a long event stream: bound
// each request with its context.
func (c *Client) HTTPClient() *http.Client {
	return &http.Client{Transport: cappedTransport{rt: c.transport, limit: c.maxBody}, CheckRedirect: refuseRedirect}
}

// cappedTransport caps the bytes read from every response body.
type cappedTransport struct {
	rt    http.RoundTripper
	limit int64
}

func (t cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.limit}
	return resp, nil
}

// cappedBody fails with ErrResponseTooLarge once more than its limit was read.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrResponseTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - int(-b.left), ErrResponseTooLarge
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
