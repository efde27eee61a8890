package gateway

// Recording a URL upstream's raw tools/list results for the pins
// (rawlist.go): an http.RoundTripper in the upstream's HTTP client reads
// each request the go-sdk posts (one JSON-RPC message, as its Streamable
// HTTP client sends them), notes a tools/list call, and reads that
// request's response as the go-sdk reads it — a JSON body (one message) or
// an event stream (a message per event's data) — handing every message to
// the recorder before the go-sdk sees the bytes that end it. Only a
// tools/list round trip is read, up to the client's own body limit (a body
// over it is not recorded, and the client refuses it).

import (
	"bytes"
	"io"
	"mime"
	"net/http"
)

// recordLists wraps hc's transport with the recorder; maxBody, the
// client's own body limit, caps what one response may make it hold.
func recordLists(hc *http.Client, rec *rawLists, maxBody int) *http.Client {
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	out := *hc
	out.Transport = &listRecorder{rt: rt, rec: rec, max: maxBody}
	return &out
}

type listRecorder struct {
	rt  http.RoundTripper
	rec *rawLists
	max int
}

func (l *listRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.GetBody == nil {
		return l.rt.RoundTrip(req)
	}
	// The go-sdk builds its request from bytes (GetBody set): read a copy.
	body, err := req.GetBody()
	if err != nil {
		return l.rt.RoundTrip(req)
	}
	data, err := io.ReadAll(io.LimitReader(body, int64(l.max)+1))
	body.Close()
	if err != nil || len(data) > l.max || !bytes.Contains(data, []byte(`"tools/list"`)) {
		return l.rt.RoundTrip(req) // not a tools/list request (a relayed call's arguments are not decoded again)
	}
	msg, err := decodeMessage(bytes.TrimSpace(data))
	if err != nil {
		return l.rt.RoundTrip(req)
	}
	l.rec.wrote(msg)
	if !l.rec.asks(msg) {
		return l.rt.RoundTrip(req)
	}
	resp, err := l.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &listBody{ReadCloser: resp.Body, rec: l.rec, max: l.max, sse: mt == "text/event-stream"}
	return resp, nil
}

// listBody hands the messages of a tools/list response to the recorder as
// the go-sdk reads it.
type listBody struct {
	io.ReadCloser
	rec  *rawLists
	max  int
	sse  bool
	buf  []byte
	over bool // more than max: nothing more is recorded
}

func (b *listBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.over && n > 0 {
		if len(b.buf)+n > b.max {
			b.over, b.buf = true, nil
		} else {
			b.buf = append(b.buf, p[:n]...)
			if b.sse {
				b.events()
			}
		}
	}
	if err == io.EOF && !b.over {
		if b.sse {
			b.buf = append(b.buf, "\n\n"...) // a last event without its blank line
			b.events()
		} else {
			b.message(b.buf)
		}
		b.buf = nil
	}
	return n, err
}

// events hands on each complete event's data and drops it from buf.
func (b *listBody) events() {
	for {
		end, sep := eventEnd(b.buf)
		if end < 0 {
			return
		}
		b.message(eventData(b.buf[:end]))
		b.buf = b.buf[end+sep:]
	}
}

// eventEnd finds the blank line that ends the first event: its index and
// length, or -1.
func eventEnd(buf []byte) (int, int) {
	best, sep := -1, 0
	for _, s := range []string{"\n\n", "\r\n\r\n", "\r\r"} {
		if i := bytes.Index(buf, []byte(s)); i >= 0 && (best < 0 || i < best) {
			best, sep = i, len(s)
		}
	}
	return best, sep
}

// eventData joins an event's data lines, as an event stream reader does.
func eventData(event []byte) []byte {
	var data []byte
	for len(event) > 0 {
		line := event
		if i := bytes.IndexAny(event, "\r\n"); i >= 0 {
			line, event = event[:i], event[i+1:] // "\r\n" leaves an empty line: no data
		} else {
			event = nil
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
	return data
}

func (b *listBody) message(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	if msg, err := decodeMessage(data); err == nil {
		b.rec.read(msg)
	}
}
