package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// readThrough reads body through a listBody in chunks of n bytes (the
// go-sdk's reads come in any size) and returns what the recorder kept for
// the tools/list request id 1.
func readThrough(t *testing.T, body []byte, n int, sse bool, max int) json.RawMessage {
	t.Helper()
	rec := &rawLists{}
	req, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	rec.wrote(req)
	b := &listBody{ReadCloser: io.NopCloser(iotest.OneByteReader(bytes.NewReader(body))), rec: rec, max: max, sse: sse}
	if n > 1 {
		b.ReadCloser = io.NopCloser(&chunked{r: bytes.NewReader(body), n: n})
	}
	got, err := io.ReadAll(b)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("the body read through the recorder changed: %q, %v", got, err)
	}
	return rec.take()
}

type chunked struct {
	r *bytes.Reader
	n int
}

func (c *chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// TestListBodyForms: the result of a tools/list response is recorded from
// a JSON body and from an event stream (LF or CRLF lines, other events
// before it, data over several lines, a last event without its blank
// line), whatever the read sizes; a body over the cap, another id, or an
// error response records nothing.
func TestListBodyForms(t *testing.T) {
	const result = `{"tools":[{"name":"a","x-extra":"1","inputSchema":{"type":"object"}}]}`
	msg := `{"jsonrpc":"2.0","id":1,"result":` + result + `}`
	for name, c := range map[string]struct {
		body string
		sse  bool
		want string
	}{
		"json":              {msg, false, result},
		"json, spaced":      {"\n " + msg + " \n", false, result},
		"sse":               {"event: message\ndata: " + msg + "\n\n", true, result},
		"sse, crlf":         {"event: message\r\nid: 7\r\ndata: " + msg + "\r\n\r\n", true, result},
		"sse, no space":     {"data:" + msg + "\n\n", true, result},
		"sse, other first":  {": comment\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: " + msg + "\n\n", true, result},
		"sse, split data":   {"data: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata: \"result\":" + result + "}\n\n", true, result},
		"sse, lf then crlf": {"data: " + msg + "\n\r\n", true, result},
		"sse, unterminated": {"data: " + msg, true, result},
		"other id":          {`{"jsonrpc":"2.0","id":2,"result":` + result + `}`, false, ""},
		"error":             {`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"no"}}`, false, ""},
		"not json":          {"<html>", false, ""},
		"sse, garbage":      {"data: {\n\n\n\ndata:\n\n", true, ""},
	} {
		for _, n := range []int{1, 3, 17, 1 << 16} {
			if got := readThrough(t, []byte(c.body), n, c.sse, 1<<16); string(got) != c.want {
				t.Errorf("%s, reads of %d: recorded %q, want %q", name, n, got, c.want)
			}
		}
	}
	if got := readThrough(t, []byte(msg), 7, false, len(msg)-1); got != nil {
		t.Errorf("a body over the cap was recorded: %q", got)
	}
}

// FuzzListBody: any body, in any read size, passes through unchanged and
// without a panic, and what is recorded is valid JSON no longer than the
// body (the result of a response to id 1 that decodeMessage accepted).
func FuzzListBody(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n"), 3, true)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x"}]}}`), 1, false)
	f.Add([]byte("data: {\r\n\r\ndata: \"\r\r"), 2, true)
	f.Fuzz(func(t *testing.T, body []byte, n int, sse bool) {
		n = 1 + int(uint(n)%64)
		got := readThrough(t, body, n, sse, 1<<20)
		if got != nil && (!json.Valid(got) || len(got) > len(body)) {
			t.Fatalf("recorded %q from %q", got, body)
		}
	})
}

// TestListBodyLinear: the search for events' ends examines each byte of the
// body about once, however the body is cut into reads: one 1 MiB event
// without a blank line in reads of 61 bytes, and 1 MiB of empty events
// (the most a read can hold) in reads of 32 KiB.
func TestListBodyLinear(t *testing.T) {
	for name, c := range map[string]struct {
		body []byte
		n    int
	}{
		"one long event":     {append([]byte("data: "), bytes.Repeat([]byte("x\r"), 1<<19)...), 61},
		"many empty events":  {bytes.Repeat([]byte("\n\n"), 1<<19), 32 << 10},
		"crlf between lines": {bytes.Repeat([]byte("data: 1\r\n"), 1<<17), 7},
	} {
		b := &listBody{ReadCloser: io.NopCloser(&chunked{r: bytes.NewReader(c.body), n: c.n}), rec: &rawLists{}, max: 4 << 20, sse: true}
		if _, err := io.Copy(io.Discard, b); err != nil {
			t.Fatal(err)
		}
		if b.scanned > 2*len(c.body)+16 || b.scanned < len(c.body)/2 {
			t.Errorf("%s: %d bytes examined for a body of %d", name, b.scanned, len(c.body))
		}
	}
}
