package gateway

// Recording a URL upstream's raw tools/list results for the pins
// (rawlist.go), and its initialize result for what it declares of tasks
// (tasks.go), as on a stdio child's connection: an http.RoundTripper in the upstream's HTTP client reads
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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	if err != nil || len(data) > l.max || (!bytes.Contains(data, []byte(`"tools/list"`)) && !bytes.Contains(data, []byte(`"initialize"`))) {
		return l.rt.RoundTrip(req) // not a tools/list or initialize request (a relayed call's arguments are not decoded again)
	}
	msg, err := decodeMessage(bytes.TrimSpace(data))
	if err != nil {
		return l.rt.RoundTrip(req)
	}
	l.rec.wrote(msg)
	if !l.rec.asks(msg) && !isInitialize(msg) {
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

// isInitialize reports whether msg is the initialize request (the recorder
// reads its answer's capabilities.tasks).
func isInitialize(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && req.Method == "initialize" && req.IsCall()
}

// listBody hands the messages of a tools/list response to the recorder as
// the go-sdk reads it.
type listBody struct {
	io.ReadCloser
	rec     *rawLists
	max     int
	sse     bool
	buf     []byte
	from    int  // where in buf the search for an event's end goes on
	over    bool // more than max: nothing more is recorded
	scanned int  // bytes the searches examined, for the budget test
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

// events hands on each complete event's data and drops it from buf. Each
// byte is examined once however the body is cut into reads and however
// many events a read holds (TestListBodyLinear).
func (b *listBody) events() {
	for {
		end, sep, next := eventEnd(b.buf, b.from)
		b.scanned += next - b.from
		if end < 0 {
			b.from = next
			return
		}
		b.message(eventData(b.buf[:end]))
		b.buf, b.from = b.buf[end+sep:], 0
	}
}

// eventEnd finds, from index from on, the blank line that ends an event: a
// line ending (CRLF, LF or CR) followed at once by another. It returns the
// event's end and the length of the two line endings, or end -1 and where
// the next search should start (at a line ending whose length the bytes
// read so far cannot tell).
func eventEnd(buf []byte, from int) (end, sep, next int) {
	i := from
	for {
		j := bytes.IndexAny(buf[i:], "\r\n")
		if j < 0 {
			return -1, 0, len(buf)
		}
		i += j
		t, ok := lineEnd(buf, i)
		if !ok {
			return -1, 0, i
		}
		if t2, ok := lineEnd(buf, i+t); ok && t2 > 0 {
			return i, t + t2, i + t + t2
		} else if !ok {
			return -1, 0, i
		}
		i += t
	}
}

// lineEnd is the length of the line ending at buf[i] (0 when buf[i] is not
// one); ok is false when it cannot be told yet (buf ends at i, or at a CR).
func lineEnd(buf []byte, i int) (n int, ok bool) {
	switch {
	case i >= len(buf):
		return 0, false
	case buf[i] == '\n':
		return 1, true
	case buf[i] != '\r':
		return 0, true
	case i+1 >= len(buf):
		return 0, false
	case buf[i+1] == '\n':
		return 2, true
	}
	return 1, true
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
