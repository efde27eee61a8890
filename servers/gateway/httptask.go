package gateway

// The task requests to a URL upstream (tasks.go): the go-sdk's client
// session cannot send them (it refuses tasks/* and drops params.task), so
// the gateway posts each one itself, on the upstream's Streamable HTTP
// session — its Mcp-Session-Id and negotiated Mcp-Protocol-Version, through
// the upstream's hardened client (httpclient.go: its credential, no
// redirects, the body cap) — and reads the answer to that request from the
// response: a JSON body or an event stream, other messages on the stream
// skipped. This is the URL upstream's side of taskConn; a stdio child's is
// its stdioConn. Whatever the transport, tasks.go does the rest.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// taskConn is what a task request goes on: build writes the request with
// the id given, and the answer to that id comes back, within deadline
// (errCallTimeout once it passes).
type taskConn interface {
	call(ctx context.Context, deadline time.Time, build func(b []byte, id string) ([]byte, error)) (*jsonrpc.Response, error)
}

// httpConn is a URL upstream's session, for task requests.
type httpConn struct {
	hc      *http.Client
	url     string
	session string // Mcp-Session-Id ("" when the upstream gave none)
	version string // the negotiated protocol version
	max     int    // the largest response body read
	nextID  atomic.Uint64
}

// httpFailure is an HTTP answer to a task request that holds no usable
// answer: a status other than 200, a redirect, a body over the cap, one
// that is not the JSON-RPC answer to the request.
type httpFailure struct{ err error }

func (e httpFailure) Error() string { return e.err.Error() }
func (e httpFailure) Unwrap() error { return e.err }

func (c *httpConn) call(ctx context.Context, deadline time.Time, build func(b []byte, id string) ([]byte, error)) (*jsonrpc.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	parent := ctx
	if !deadline.IsZero() {
		if time.Until(deadline) <= 0 {
			return nil, errCallTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	resp, err := c.post(ctx, build)
	if err != nil && ctx.Err() != nil && parent.Err() == nil {
		return nil, errCallTimeout
	}
	return resp, err
}

func (c *httpConn) post(ctx context.Context, build func(b []byte, id string) ([]byte, error)) (*jsonrpc.Response, error) {
	id := rawIDPrefix + "t" + strconv.FormatUint(c.nextID.Add(1), 10)
	body, err := build(nil, id)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", c.version)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, httpFailure{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, httpFailure{fmt.Errorf("HTTP status %d", resp.StatusCode)}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		data, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.max)+1))
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return nil, httpFailure{err}
		case len(data) > c.max:
			return nil, httpFailure{fmt.Errorf("a body over the %d-byte cap", c.max)}
		}
		if r := answerTo(bytes.TrimSpace(data), id); r != nil {
			return r, nil
		}
		return nil, httpFailure{errors.New("a body that is not the JSON-RPC answer to the request")}
	case "text/event-stream":
		return c.stream(ctx, resp.Body, id)
	}
	return nil, httpFailure{fmt.Errorf("a body of type %q", mt)}
}

// stream reads an event stream until the answer to id, skipping the other
// messages on it (notifications, requests the relay does not answer); all
// it reads is bounded by the body cap.
func (c *httpConn) stream(ctx context.Context, body io.Reader, id string) (*jsonrpc.Response, error) {
	var buf []byte
	from, total := 0, 0
	chunk := make([]byte, 32<<10)
	for {
		n, err := body.Read(chunk)
		total += n
		if total > c.max {
			return nil, httpFailure{fmt.Errorf("an event stream over the %d-byte cap", c.max)}
		}
		buf = append(buf, chunk[:n]...)
		if err == io.EOF {
			buf = append(buf, "\n\n"...) // a last event without its blank line
		}
		for {
			end, sep, next := eventEnd(buf, from)
			if end < 0 {
				from = next
				break
			}
			if r := answerTo(bytes.TrimSpace(eventData(buf[:end])), id); r != nil {
				return r, nil
			}
			buf, from = buf[end+sep:], 0
		}
		switch {
		case err == io.EOF:
			return nil, httpFailure{errors.New("an event stream that ended without the answer to the request")}
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return nil, httpFailure{err}
		}
	}
}

// answerTo is data decoded when it is the JSON-RPC response to id, or nil.
func answerTo(data []byte, id string) *jsonrpc.Response {
	if len(data) == 0 {
		return nil
	}
	msg, err := decodeMessage(data)
	if err != nil {
		return nil
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.ID.Raw() != id {
		return nil
	}
	return resp
}
