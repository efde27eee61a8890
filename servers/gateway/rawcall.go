package gateway

// The relayed tools/call to a stdio upstream, without the go-sdk client
// session: the gateway writes the request on its own connection to the
// child (stdioconn.go), through the writer the go-sdk's messages share,
// with an id the go-sdk never uses, and its read loop hands the answer
// straight back, decoded once (rawdecode.go). Everything else the child
// writes — its requests to the client (elicitation, sampling, roots, ping),
// progress and log notifications, list_changed, and the answers to the
// go-sdk's own requests — goes to the go-sdk session as before, so progress
// and logs reach the call through the same handlers (calls.go).
//
// It sends what the go-sdk's ClientSession.CallTool sends (the same params,
// and on 2026-07-28 the same per-request _meta, copied from the go-sdk's own
// tools/list request on that connection) and answers what it answers: a
// JSON-RPC error as the same *jsonrpc.Error, a cancelled call with
// notifications/cancelled for its id, a connection that ends (a crash, an
// answer over the line cap, EOF) as a closed connection, and an
// input_required result (2026-07-28) with the go-sdk's own retry loop:
// roots answered with no roots, elicitation and sampling refused as the
// go-sdk refuses them for a client without those handlers. Upstreams that
// relay questions (relay.go) keep the go-sdk path, whose handlers do the
// relaying; so do URL upstreams.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk's retry limits for input_required results (mcp/mrtr.go).
const (
	maxInputRetries     = 10
	maxLoadShedRetries  = 3
	cancelNotifyTimeout = 5 * time.Second
)

// The per-request _meta members the go-sdk adds on 2026-07-28 sessions
// (injectRequestMeta).
var sdkMetaKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}

// sdkMeta returns the go-sdk's per-request _meta members of a request's
// params, encoded as object members ("k":v,…), or empty (a session on an
// earlier version, where the go-sdk adds none).
func sdkMeta(params json.RawMessage) *[]byte {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	out := []byte{}
	if json.Unmarshal(params, &p) != nil {
		return &out
	}
	for _, k := range sdkMetaKeys {
		if v, ok := p.Meta[k]; ok {
			if len(out) > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendQuote(out, k)
			out = append(append(out, ':'), v...)
		}
	}
	return &out
}

// appendCall appends the tools/call request with id and params (their
// _meta joined with the go-sdk's per-request members): the bytes
// marshalCall produces, built by appending when every part is one whose
// encoding is known without encoding/json — string _meta values, plain
// strings, and arguments that are compact JSON (the kernel's validated
// arguments are) — and by marshalCall otherwise. p.Arguments, when a
// json.RawMessage, must be valid JSON (the kernel's are).
func appendCall(b []byte, id string, sdk []byte, p *mcp.CallToolParams) ([]byte, error) {
	args, ok := p.Arguments.(json.RawMessage)
	if !ok || p.InputResponses != nil || p.RequestState != "" || !plainString(id) || !plainString(p.Name) {
		return marshalCall(b, id, sdk, p)
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`) // as the go-sdk sends no arguments
	}
	if !plainCompact(args) {
		return marshalCall(b, id, sdk, p)
	}
	var keys [4]string
	ks := keys[:0]
	for k, v := range p.Meta {
		s, ok := v.(string)
		if !ok || !plainString(k) || !plainString(s) {
			return marshalCall(b, id, sdk, p)
		}
		ks = append(ks, k)
	}
	slices.Sort(ks) // encoding/json sorts map keys
	b = append(b, `{"jsonrpc":"2.0","id":"`...)
	b = append(b, id...)
	b = append(b, `","method":"tools/call","params":{`...)
	if p.Meta != nil || len(sdk) > 0 {
		b = append(b, `"_meta":{`...)
		for i, k := range ks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), k...), `":"`...)
			b = append(append(b, p.Meta[k].(string)...), '"')
		}
		if len(sdk) > 0 {
			if len(ks) > 0 {
				b = append(b, ',')
			}
			b = appendEscapedHTML(b, sdk)
		}
		b = append(b, "},"...)
	}
	b = append(append(b, `"name":"`...), p.Name...)
	b = append(append(b, `","arguments":`...), args...)
	return append(b, "}}"...), nil
}

// plainString reports whether encoding/json writes s as itself between
// quotes: printable ASCII without '"', '\\' or the HTML characters it escapes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainCompact reports whether encoding/json re-encodes the valid JSON raw
// as itself: no whitespace outside strings, and none of the characters it
// escapes for HTML (<, >, &, U+2028, U+2029) anywhere. Runs of bytes that
// are none of those, nor a quote or a backslash, are skipped by table
// (compactPlain): a call's arguments are mostly such runs, and a switch per
// byte cost some ten instructions a byte.
func plainCompact(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		for i < len(raw) && compactPlain[raw[i]] {
			i++
		}
		if i == len(raw) {
			break
		}
		switch c := raw[i]; {
		case c == '<' || c == '>' || c == '&' || c == 0xe2:
			if c != 0xe2 || (i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xa8 || raw[i+2] == 0xa9)) {
				return false
			}
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// compactPlain marks the bytes plainCompact passes over wherever they are:
// all but whitespace, the quote, the backslash, the HTML characters and
// 0xE2 (the lead byte of U+2028 and U+2029).
var compactPlain = func() (t [256]bool) {
	for c := range t {
		switch c {
		case ' ', '\t', '\n', '\r', '"', '\\', '<', '>', '&', 0xe2:
		default:
			t[c] = true
		}
	}
	return t
}()

// appendEscapedHTML appends the compact JSON members raw with the escapes
// encoding/json adds for HTML (the go-sdk's _meta members came from its own
// encoding, so they hold none; this keeps the bytes equal if one does).
func appendEscapedHTML(b, raw []byte) []byte {
	if plainCompact(raw) {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	buf.Write(raw)
	buf.WriteByte('}')
	var out bytes.Buffer
	if json.Compact(&out, buf.Bytes()) != nil {
		return append(b, raw...)
	}
	var esc bytes.Buffer
	json.HTMLEscape(&esc, out.Bytes())
	e := esc.Bytes()
	return append(b, e[1:len(e)-1]...)
}

// marshalCall is appendCall through encoding/json: the reference, and the
// way for parts appendCall does not encode itself.
func marshalCall(b []byte, id string, sdk []byte, p *mcp.CallToolParams) ([]byte, error) {
	var meta []byte
	if p.Meta != nil {
		var err error
		if meta, err = json.Marshal(p.Meta); err != nil {
			return nil, err
		}
	}
	if len(sdk) > 0 {
		if len(meta) > 2 {
			meta = append(append(meta[:len(meta)-1], ','), sdk...)
			meta = append(meta, '}')
		} else {
			meta = append(append([]byte{'{'}, sdk...), '}')
		}
	}
	args, ok := p.Arguments.(json.RawMessage)
	if !ok {
		var err error
		if args, err = json.Marshal(p.Arguments); err != nil {
			return nil, err
		}
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`) // as the go-sdk sends no arguments
	}
	w := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  struct {
			Meta           json.RawMessage      `json:"_meta,omitempty"`
			Name           string               `json:"name"`
			Arguments      json.RawMessage      `json:"arguments"`
			InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
			RequestState   string               `json:"requestState,omitempty"`
		} `json:"params"`
	}{JSONRPC: "2.0", ID: id, Method: "tools/call"}
	w.Params.Meta, w.Params.Name, w.Params.Arguments = meta, p.Name, args
	w.Params.InputResponses, w.Params.RequestState = p.InputResponses, p.RequestState
	data, err := json.Marshal(&w)
	if err != nil {
		return nil, fmt.Errorf("marshaling message: %w", err)
	}
	return append(b, data...), nil
}

// rawCallTool is ClientSession.CallTool for a gateway that relays no
// questions, on the child's connection, within timeout (none when zero;
// errCallTimeout when it passes).
func rawCallTool(ctx context.Context, c *stdioConn, params *mcp.CallToolParams, timeout time.Duration) (*mcp.CallToolResult, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	p := *params
	var sdk []byte
	if m := c.meta.Load(); m != nil {
		sdk = *m
	}
	shed := 0
	for retries := 1; ; retries++ {
		resp, err := c.call(ctx, deadline, func(b []byte, id string) ([]byte, error) { return appendCall(b, id, sdk, &p) })
		if err != nil {
			return nil, err
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("calling %q: %w", "tools/call", resp.Error)
		}
		res, err := decodeCheckedCallResult(resp.Result) // decodeMessage checked its nesting
		if err != nil {
			return nil, fmt.Errorf("calling %q: %w", "tools/call", badResult{err})
		}
		if res.InputRequests == nil {
			return res, nil
		}
		// The go-sdk's retry loop (clientMultiRoundTripMiddleware).
		if len(res.InputRequests) == 0 {
			shed++
		}
		if shed >= maxLoadShedRetries {
			return nil, fmt.Errorf("multi-round-trip: exceeded maximum load-shedding retries (%d)", maxLoadShedRetries)
		}
		if retries >= maxInputRetries {
			return nil, fmt.Errorf("multi-round-trip: exceeded maximum retries (%d)", maxInputRetries)
		}
		answers := make(mcp.InputResponseMap, len(res.InputRequests))
		for id, ir := range res.InputRequests {
			a, err := refuseInput(ir)
			if err != nil {
				return nil, fmt.Errorf("multi round-trip: %w", fmt.Errorf("fulfilling input request %q: %w", id, err))
			}
			answers[id] = a
		}
		p.InputResponses, p.RequestState = answers, res.RequestState
	}
}

// refuseInput answers an input request as the go-sdk's client does when it
// has no elicitation or sampling handler and no roots.
func refuseInput(ir mcp.InputRequest) (mcp.InputResponse, error) {
	switch ir.(type) {
	case *mcp.ElicitParams:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "client does not support elicitation"}
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return nil, &jsonrpc.Error{Code: -31001, Message: "client does not support CreateMessage"}
	case *mcp.ListRootsParams:
		return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
	}
	return nil, fmt.Errorf("unknown input request type: %T", ir)
}
