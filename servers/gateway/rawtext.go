package gateway

// The plain answer's fast path: what a relayed call's answer almost always
// is — a response {"jsonrpc":"2.0","id":"bulwark-gw-N","result":R}, R a
// result of text blocks only, {"content":[{"type":"text","text":"…"},…]}
// and perhaps "isError", "resultType":"complete" and a _meta of strings,
// booleans and nulls (which the gateway never reads) — read by a small scanner of a narrow grammar
// instead of segmentio's reflection: objects with the members named here,
// each at most once, keys and strings without escapes, control characters
// or invalid UTF-8, the literals true and false, and JSON white space. What
// falls outside it, however little (a number, a _meta, a structuredContent,
// an escape, a repeated member, an id that is a number, anything after the
// message), goes the whole way through decodeMessage's or
// decodeCheckedCallResult's segmentio decoding, as before. Within the
// grammar the go-sdk's decoding has one meaning (no escape to resolve, no
// invalid UTF-8 to coerce, no case-insensitive or repeated key, no number
// range), which the scanner gives: FuzzDecodeMessage, FuzzDecodeCallResult
// and FuzzPlainText hold it to the go-sdk's decoding and to the segmentio
// path.

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainScan reads the narrow grammar from b at i.
type plainScan struct {
	b []byte
	i int
}

func (s *plainScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// next skips white space and reports whether c comes next, consuming it.
func (s *plainScan) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters, of valid
// UTF-8, and returns its bytes (within b). The closing quote and any
// backslash are found by bytes.IndexByte, control characters and non-ASCII
// bytes eight at a time (plainBytes).
func (s *plainScan) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	k := bytes.IndexByte(s.b[s.i:], '"')
	if k < 0 {
		return nil, false
	}
	v := s.b[s.i : s.i+k]
	if bytes.IndexByte(v, '\\') >= 0 { // an escape (the quote found may even be escaped)
		return nil, false
	}
	ascii, ok := plainBytes(v)
	if !ok || !ascii && !utf8.Valid(v) {
		return nil, false
	}
	s.i += k + 1
	return v, true
}

// plainBytes reports whether v holds no control character (below 0x20),
// and whether it is all ASCII.
func plainBytes(v []byte) (ascii, ok bool) {
	if printable(v) {
		return true, true
	}
	ascii = true
	for _, c := range v {
		if c < 0x20 {
			return false, false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	return ascii, true
}

// printable reports whether every byte of v is within [0x20, 0x80): 32,
// then 8, bytes at a time. In a word, a byte below 0x20 borrows and one at
// or above 0x80 has its high bit: either sets the high bit of some byte.
func printable(v []byte) bool {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	le := binary.LittleEndian
	for len(v) >= 32 {
		w0, w1, w2, w3 := le.Uint64(v), le.Uint64(v[8:]), le.Uint64(v[16:]), le.Uint64(v[24:])
		if ((w0-lo)|w0|(w1-lo)|w1|(w2-lo)|w2|(w3-lo)|w3)&hi != 0 { // (- and | bind alike)
			return false
		}
		v = v[32:]
	}
	var acc uint64
	for len(v) >= 8 {
		w := le.Uint64(v)
		acc |= (w - lo) | w
		v = v[8:]
	}
	for _, c := range v {
		if c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return acc&hi == 0
}

// boolean reads true or false.
func (s *plainScan) boolean() (v, ok bool) {
	s.ws()
	switch r := s.b[s.i:]; {
	case len(r) >= 4 && string(r[:4]) == "true":
		s.i += 4
		return true, true
	case len(r) >= 5 && string(r[:5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

// object reads an object's members, calling member for each key (which
// reads the value); it refuses a key member refuses or that comes twice
// (at most 8 distinct keys).
func (s *plainScan) object(member func(key []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	var seen [8][]byte
	n := 0
	for {
		k, ok := s.str()
		if !ok || !s.next(':') || n == len(seen) {
			return false
		}
		for _, p := range seen[:n] {
			if string(p) == string(k) {
				return false
			}
		}
		seen[n] = k
		if !member(k) {
			return false
		}
		n++
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// maxPlainDepth bounds the nesting of a _meta the fast path reads.
const maxPlainDepth = 16

// value reads any value of the grammar but numbers — an object (repeated
// keys allowed: nothing reads them), an array, a string, true, false,
// null — nested at most maxPlainDepth deep.
func (s *plainScan) value(depth int) bool {
	if depth > maxPlainDepth {
		return false
	}
	s.ws()
	if s.i == len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		_, ok := s.str()
		return ok
	case '{':
		s.i++
		if s.next('}') {
			return true
		}
		for {
			if _, ok := s.str(); !ok || !s.next(':') || !s.value(depth+1) {
				return false
			}
			if s.next('}') {
				return true
			}
			if !s.next(',') {
				return false
			}
		}
	case '[':
		s.i++
		if s.next(']') {
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			if s.next(']') {
				return true
			}
			if !s.next(',') {
				return false
			}
		}
	case 'n':
		if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
			s.i += 4
			return true
		}
		return false
	}
	_, ok := s.boolean()
	return ok
}

// maxPlainBlocks bounds the text blocks the fast path reads; a result with
// more goes through segmentio.
const maxPlainBlocks = 8

// plainText is a plain result as read: its texts (within the scanned
// bytes) and isError.
type plainText struct {
	texts   [maxPlainBlocks][]byte
	n       int
	isError bool
}

// result reads a plain result into p.
func (s *plainScan) result(p *plainText) bool {
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return s.blocks(p)
		case "isError":
			var ok bool
			p.isError, ok = s.boolean()
			return ok
		case "resultType": // the go-sdk's servers write it; its decoding (and decodeCheckedCallResult) drops it
			t, ok := s.str()
			return ok && string(t) == "complete"
		case "_meta": // never read (decodeCheckedCallResult): an object without numbers, which the go-sdk always accepts (metaDecodes)
			s.ws()
			return s.i < len(s.b) && s.b[s.i] == '{' && s.value(0)
		}
		return false
	})
}

// blocks reads a content array of text blocks.
func (s *plainScan) blocks(p *plainText) bool {
	if !s.next('[') {
		return false
	}
	if s.next(']') {
		return true
	}
	for {
		if p.n == maxPlainBlocks {
			return false
		}
		var text []byte
		typed := false
		ok := s.object(func(key []byte) bool {
			switch string(key) {
			case "type":
				t, ok := s.str()
				typed = ok && string(t) == "text"
				return typed
			case "text":
				var ok bool
				text, ok = s.str()
				return ok
			}
			return false
		})
		if !ok || !typed {
			return false
		}
		p.texts[p.n] = text
		p.n++
		if s.next(']') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// atEnd reports whether only white space is left.
func (s *plainScan) atEnd() bool {
	s.ws()
	return s.i == len(s.b)
}

// plainResult is decodeCheckedCallResult of a plain result, or ok false
// for anything else. What the go-sdk's decoding builds — a CallToolResult
// whose content is never nil — in one allocation beside the texts when
// there is one block.
func plainResult(raw []byte) (res *mcp.CallToolResult, ok bool) {
	var p plainText
	s := plainScan{b: raw}
	if !s.result(&p) || !s.atEnd() {
		return nil, false
	}
	if p.n == 1 {
		one := new(struct {
			res    mcp.CallToolResult
			text   mcp.TextContent
			blocks [1]mcp.Content
		})
		one.text.Text = string(p.texts[0])
		one.blocks[0] = &one.text
		one.res.Content, one.res.IsError = one.blocks[:], p.isError
		return &one.res, true
	}
	res = &mcp.CallToolResult{Content: make([]mcp.Content, p.n), IsError: p.isError}
	texts := make([]mcp.TextContent, p.n)
	for i := range p.n {
		texts[i].Text = string(p.texts[i])
		res.Content[i] = &texts[i]
	}
	return res, true
}

// plainResponse is decodeMessage of a response to one of the gateway's own
// calls (an id that is a string) carrying a plain result, or ok false for
// anything else. Its result is a copy, as decodeMessage's.
func plainResponse(data []byte) (resp *jsonrpc.Response, ok bool) {
	var id, version []byte
	var start, end int
	var p plainText
	s := plainScan{b: data}
	ok = s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "jsonrpc":
			version, ok = s.str()
		case "id":
			id, ok = s.str()
		case "result":
			s.ws()
			start = s.i
			ok = s.result(&p)
			end = s.i
		}
		return ok
	})
	if !ok || !s.atEnd() || string(version) != "2.0" || id == nil || end == 0 {
		return nil, false
	}
	rid, err := jsonrpc.MakeID(string(id))
	if err != nil {
		return nil, false
	}
	return &jsonrpc.Response{ID: rid, Result: append([]byte(nil), data[start:end]...)}, true
}
