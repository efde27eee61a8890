package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// The HTTP fast path answers stateless requests straight from the message
// the guards parsed once (httpguard.RequestMessage), instead of handing the
// body to the go-sdk, which decodes it twice more and builds a session, a
// connection and goroutines per request. It runs the same steps as the
// go-sdk's path (admitCall, then the tool's handler) and writes what the
// go-sdk would write, byte for byte: TestFastPathEquivalence and
// FuzzFastPathEquivalence send every request through both and compare.
// Which requests it answers, and where each rule is: docs/architecture.md;
// where it stands in the pipeline: kernel/doc.go.

// fastTools is what the fast path answers from, filled by register (the
// tools of New: tools is their list) and set (a tool added at run time,
// dynamic.go: its handler only, as only the stdio front calls such tools).
type fastTools struct {
	answered atomic.Int64 // requests either front answered itself: the tests' proof it did
	impl     *mcp.Implementation
	implJSON []byte // impl as encoding/json writes it, for 2026-07-28 results' _meta
	tools    []*mcp.Tool
	mu       sync.RWMutex // guards handlers and mirrored once the server serves
	handlers map[string]mcp.ToolHandler
	mirrored map[string]bool // tools with x-mcp-header parameters
}

func (f *fastTools) add(t *mcp.Tool, h mcp.ToolHandler) {
	f.tools = append(f.tools, t)
	f.set(t, h)
}

// set registers the handler of the tool t, replacing one of the same name.
func (f *fastTools) set(t *mcp.Tool, h mcp.ToolHandler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.handlers == nil {
		f.handlers, f.mirrored = map[string]mcp.ToolHandler{}, map[string]bool{}
	}
	f.handlers[t.Name] = h
	// The go-sdk requires the Mcp-Param-* header of an x-mcp-header
	// parameter (SEP-2243) even when the request sends none, so calls of
	// such a tool are its to answer. Any mention counts: erring towards
	// the go-sdk is safe.
	b, err := json.Marshal(t.InputSchema)
	f.mirrored[t.Name] = err != nil || bytes.Contains(b, []byte(`"x-mcp-header"`))
}

// fastVersion is the protocol version the fast path answers: "" for none
// sent (the go-sdk then assumes 2025-03-26), a legacy version the go-sdk
// negotiates, or exactly 2026-07-28. ok is false for anything else.
const fastModernVersion = "2026-07-28"

// fastList is the encoded tools/list result for legacy and modern requests.
type fastList struct{ legacy, modern []byte }

// fastPath wraps the go-sdk's handler (sdk) with the fast path.
func (s *Server) fastPath(sdk http.Handler) http.Handler {
	list, err := s.fast.lists()
	if err != nil {
		s.logger.Warn("fast path off: encoding tools/list failed", "error", err.Error())
		return sdk
	}
	discover := discoverResult(sdk) // nil: the go-sdk answers server/discover
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env, modern, id, h, ok := s.fastEligible(r)
		if !ok || (env.Method == "server/discover" && discover == nil) {
			sdk.ServeHTTP(w, r)
			return
		}
		if env.WantsNotifications { // a tools/call (fastEligible): streamed, or the go-sdk's
			tok, level, ok := streamToken(env.Meta, modern)
			if !ok {
				sdk.ServeHTTP(w, r)
				return
			}
			s.fast.answered.Add(1)
			s.fastCallStream(w, r, env, modern, id, h, tok, level)
			return
		}
		s.fast.answered.Add(1)
		switch env.Method {
		case "ping": // legacy only (see fastEligible)
			writeFast(w, id, func(b []byte) ([]byte, error) { return append(b, "{}"...), nil })
		case "tools/list":
			res := list.legacy
			if modern {
				res = list.modern
			}
			writeFast(w, id, func(b []byte) ([]byte, error) { return append(b, res...), nil })
		case "tools/call":
			s.fastCall(w, r, env, modern, id, h)
		case "server/discover": // 2026-07-28 only (see fastEligible)
			writeFast(w, id, func(b []byte) ([]byte, error) { return append(b, discover...), nil })
		}
	})
}

// fastEligible decides whether the HTTP fast path answers r, and returns
// its message, whether it speaks 2026-07-28, its id as the go-sdk writes
// it, and for a tools/call the tool's handler. A request rule of the fast
// paths (docs/architecture.md).
func (s *Server) fastEligible(r *http.Request) (env httpguard.Message, modern bool, id []byte, h mcp.ToolHandler, ok bool) {
	env, err := httpguard.RequestMessage(r)
	if err != nil || env.ID == nil || env.Response || env.OtherParams {
		return env, false, nil, nil, false
	}
	switch env.Method {
	case "ping", "server/discover":
	case "tools/list":
		if !s.fastListable() {
			return env, false, nil, nil, false
		}
	case "tools/call":
		if h, ok = s.fastCallable(env.Name, env.Meta, false); !ok {
			return env, false, nil, nil, false
		}
		if a, decided := admissionFrom(r.Context(), env.Name); !decided || a.refusal != nil {
			return env, false, nil, nil, false
		}
	default:
		return env, false, nil, nil, false
	}
	if modern, ok = fastVersion(r.Header, env); !ok || !plainHeaders(r.Header) {
		return env, false, nil, nil, false
	}
	if modern && (env.Method == "ping" || !modernMeta(env.Meta)) { // 2026-07-28 has no ping: the go-sdk answers 404
		return env, false, nil, nil, false
	}
	if !modern && env.Method == "server/discover" { // the go-sdk answers -32601
		return env, false, nil, nil, false
	}
	if env.WantsNotifications && env.Method != "tools/call" { // see fastpath_stream.go
		return env, false, nil, nil, false
	}
	id, ok = wireID(env.ID)
	return env, modern, id, h, ok
}

// fastVersion reports whether the request speaks 2026-07-28 (header and
// _meta agreeing; the guards already refused a disagreement) or a legacy
// version without a _meta version. ok is false for anything else.
func fastVersion(h http.Header, env httpguard.Message) (modern, ok bool) {
	var v string
	if vs := h["Mcp-Protocol-Version"]; len(vs) > 0 { // h.Get without canonicalizing a canonical name
		v = vs[0]
	}
	switch {
	case v == fastModernVersion:
		return true, env.ProtocolVersion == v
	case v == "" || (!httpguard.IsModernVersion(v) && slices.Contains(supportedVersions(), v)):
		return false, env.ProtocolVersion == ""
	}
	return false, false
}

// supportedVersions is mcp.SupportedProtocolVersions, which copies its list
// on every call, read once: the go-sdk's list is fixed when it is built.
var supportedVersions = sync.OnceValue(mcp.SupportedProtocolVersions)

// modernMeta reports whether a 2026-07-28 request's _meta carries what the
// go-sdk requires of it (SEP-2575): clientCapabilities, and clientInfo if
// present, each decodable into the go-sdk's types. It decodes as the go-sdk
// does (a generic value, re-encoded into the type) but with encoding/json,
// which refuses at least what the go-sdk's case-sensitive decoder refuses:
// when in doubt the go-sdk answers.
func modernMeta(raw json.RawMessage) bool {
	var meta map[string]any
	if json.Unmarshal(raw, &meta) != nil {
		return false
	}
	if v, present := meta[mcp.MetaKeyClientInfo]; present && !redecodes(v, new(mcp.Implementation)) {
		return false
	}
	var caps struct { // the go-sdk's clientCapabilitiesV2
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	return redecodes(meta[mcp.MetaKeyClientCapabilities], &caps)
}

// redecodes reports whether a decoded JSON value v, present and not null,
// decodes into to.
func redecodes(v, to any) bool {
	if v == nil {
		return false
	}
	b, err := json.Marshal(v)
	return err == nil && json.Unmarshal(b, to) == nil
}

// plainHeaders reports that no header asks for what only the go-sdk
// handles: a Last-Event-ID (refused on POST), or Mcp-Param-* values it
// checks against the tool's schema.
func plainHeaders(h http.Header) bool {
	for k := range h {
		if k == "Last-Event-Id" || strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	return true
}

// wireID is the id as the go-sdk writes it back: a number as the integer
// it read, a string re-encoded (escapes resolved). ok is false when the
// strict decoder refuses it; the go-sdk then answers.
func wireID(raw json.RawMessage) ([]byte, bool) {
	if raw[0] != '"' {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, false
		}
		var buf [20]byte
		if b := strconv.AppendInt(buf[:0], n, 10); !bytes.Equal(b, raw) {
			return bytes.Clone(b), true
		}
		return raw, true // already as the go-sdk writes it (the message's own copy)
	}
	v, err := jsonscan.DecodeString(raw[1:len(raw)-1], bytes.IndexByte(raw, '\\') >= 0)
	if err != nil {
		return nil, false
	}
	b, err := marshalWire(v)
	return b, err == nil
}

// fastCallable reports whether the fast path (either front) may run a call
// of the tool name whose request carries _meta meta, in a session whose
// client declared elicitation at initialize (sessionElicits: stdio only;
// an HTTP request has no session), and returns its handler. A tool rule
// of the fast paths (docs/architecture.md).
func (s *Server) fastCallable(name string, meta json.RawMessage, sessionElicits bool) (mcp.ToolHandler, bool) {
	s.fast.mu.RLock()
	h, known := s.fast.handlers[name]
	mirrored := s.fast.mirrored[name]
	s.fast.mu.RUnlock()
	t, registered := s.lookup(name)
	if !known || mirrored || !registered || len(t.requires) > 0 || t.mayAskNow(meta) ||
		(sessionElicits && t.policy.Confirm.Gated() && s.opts.ConfirmBy != ConfirmToken) {
		return nil, false
	}
	return h, true
}

// fastListable reports whether the fast path (either front) may answer
// tools/list from the list encoded once. A tool rule of the fast paths
// (docs/architecture.md).
func (s *Server) fastListable() bool {
	return len(s.fast.tools) <= mcp.DefaultPageSize && s.authz == nil && !s.opts.DynamicTools && !s.taskTools.Load()
}

// fastResult is the core of tools/call on the fast path, for both fronts:
// the same admission and tool-layer steps as the go-sdk's path. handled is
// true when the tool's handler answered (not admission). err is a JSON-RPC
// error of admission (a rate-limit or outage refusal, which the HTTP front
// has already answered before) or of the tool layer (a refused
// requestState, which never reaches the fast path).
func (s *Server) fastResult(ctx context.Context, h mcp.ToolHandler, name string, args json.RawMessage, extra *mcp.RequestExtra) (res *mcp.CallToolResult, err error, handled bool) {
	fr := &fastRequest{params: mcp.CallToolParamsRaw{Name: name, Arguments: args}}
	if extra != nil {
		fr.extra = *extra
		extra = &fr.extra
	}
	fr.req = mcp.CallToolRequest{Params: &fr.params, Extra: extra}
	req := &fr.req
	res, err, answered := s.admitCall(ctx, req)
	if !answered {
		res, err = h(ctx, req)
	}
	if err == nil && res != nil {
		res = fastToolResult(res, answered)
	}
	return res, err, !answered
}

// fastRequest holds a fast call's request, its parameters and its extra
// in one allocation (three before).
type fastRequest struct {
	req    mcp.CallToolRequest
	params mcp.CallToolParamsRaw
	extra  mcp.RequestExtra
}

// fastCall is tools/call over HTTP of the tool whose handler is h
// (fastEligible): fastResult, the result encoded once.
func (s *Server) fastCall(w http.ResponseWriter, r *http.Request, env httpguard.Message, modern bool, id []byte, h mcp.ToolHandler) {
	ctx := r.Context()
	res, err, handled := s.fastResult(ctx, h, env.Name, env.Arguments,
		&mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(ctx), Header: r.Header})
	if err != nil || res == nil {
		// Unreachable: the HTTP admission answered every refusal before, and
		// the tool layer turns every failure into a tool error.
		httpguard.WriteError(w, http.StatusInternalServerError, env.ID, -32603, "internal error", nil)
		return
	}
	writeFast(w, id, func(b []byte) ([]byte, error) { return s.appendResult(b, res, modern, modern && handled) })
}

// fastToolResult applies the go-sdk's rule for what a tool handler returns
// (not what a middleware answers): content is never null.
func fastToolResult(res *mcp.CallToolResult, admission bool) *mcp.CallToolResult {
	if admission || res.Content != nil {
		return res
	}
	out := *res
	out.Content = []mcp.Content{}
	return &out
}

// appendResult appends a tools/call result encoded as the go-sdk encodes
// it. For 2026-07-28 it adds the server's identity to _meta and, when
// complete is set, resultType "complete": a field the go-sdk keeps
// unexported and writes last, on a result that came from the tool handler
// (the go-sdk's callTool, not a middleware) when the session's parameters
// name 2026-07-28 or later (a stateless HTTP request has none: the go-sdk
// then assumes the latest).
func (s *Server) appendResult(b []byte, res *mcp.CallToolResult, modern, complete bool) ([]byte, error) {
	var info []byte
	if modern {
		if _, ok := res.Meta[mcp.MetaKeyServerInfo]; !ok {
			info = s.fast.implJSON
		}
	}
	b, err := appendCallResultInfo(b, res, info, s.fast.impl)
	if err != nil || !complete {
		return b, err
	}
	b = b[:len(b)-1]
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	return append(b, `"resultType":"complete"}`...), nil
}

// appendCallResult appends res as the go-sdk's CallToolResult.MarshalJSON
// writes it (encoding/json with HTML escaping, fields in declaration
// order), without its reflection and the re-compaction encoding/json applies
// to a marshaler's output: _meta when not empty, content, structuredContent
// when not nil, isError when true. A text content without _meta or
// annotations (what the kernel's results hold) and the kernel's untrusted
// _meta are written directly; everything else through encoding/json, which
// is what the go-sdk uses for them. A result with input requests or a
// request state (the go-sdk's MRTR fields) is encoded by the go-sdk itself.
// TestAppendCallResult and FuzzAppendCallResult compare it with the go-sdk.
func appendCallResult(b []byte, res *mcp.CallToolResult) ([]byte, error) {
	return appendCallResultInfo(b, res, nil, nil)
}

// appendCallResultInfo is appendCallResult of res with impl added to its
// _meta as the server's identity (mcp.MetaKeyServerInfo) when info, impl's
// encoding, is not nil, without copying res or its _meta for it.
func appendCallResultInfo(b []byte, res *mcp.CallToolResult, info []byte, impl *mcp.Implementation) ([]byte, error) {
	if res.InputRequests != nil || res.RequestState != "" {
		if info != nil {
			res = withServerInfo(res, impl)
		}
		body, err := marshalWire(res)
		return append(b, body...), err
	}
	b = append(b, '{')
	if len(res.Meta) > 0 || info != nil {
		b = append(b, `"_meta":`...)
		var err error
		if b, err = appendMeta(b, res.Meta, info, impl); err != nil {
			return b, err
		}
		b = append(b, ',')
	}
	b = append(b, `"content":`...)
	if res.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range res.Content {
			if i > 0 {
				b = append(b, ',')
			}
			if tc, ok := c.(*mcp.TextContent); ok && tc != nil && len(tc.Meta) == 0 && tc.Annotations == nil {
				b = append(b, `{"type":"text","text":`...)
				b = jsonscan.AppendHTMLString(b, tc.Text)
				b = append(b, '}')
				continue
			}
			v, err := json.Marshal(c)
			if err != nil {
				return b, err
			}
			b = append(b, v...)
		}
		b = append(b, ']')
	}
	if res.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if raw, ok := res.StructuredContent.(json.RawMessage); ok && raw != nil && compactHTMLSafe(raw) && validJSON(raw) {
			b = append(b, raw...) // what encoding/json's compaction would write: the same bytes
		} else {
			v, err := json.Marshal(res.StructuredContent)
			if err != nil {
				return b, err
			}
			b = append(b, v...)
		}
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// compactHTMLSafe reports whether raw, if it is valid JSON, is what
// encoding/json writes for a json.RawMessage: no white space outside
// strings, and nothing it escapes for HTML (<, >, &, U+2028, U+2029).
func compactHTMLSafe(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			return false
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// validJSON reports whether raw is one JSON value, by the kernel's grammar
// (jsonscan), which accepts what json.Valid accepts but for nesting deeper
// than jsonscan.DefaultMaxDepth; such a value is then encoded through
// encoding/json, to the same bytes. FuzzValidJSON compares the two.
func validJSON(raw []byte) bool {
	sc := jsonscan.Scanner{Data: raw}
	return sc.Skip(0) == nil && sc.AtEnd()
}

// appendMeta appends a result's _meta with, when info is not nil, impl
// (whose encoding info is) as the server's identity: the kernel's own
// (shape's {"bulwark/untrusted":{"source":S}}) and the identity directly,
// anything else through encoding/json (map keys sorted, as it writes them).
func appendMeta(b []byte, meta mcp.Meta, info []byte, impl *mcp.Implementation) ([]byte, error) {
	switch {
	case len(meta) == 0 && info != nil:
		b = append(b, `{"`+mcp.MetaKeyServerInfo+`":`...)
		return append(append(b, info...), '}'), nil
	case len(meta) == 1:
		if u, ok := meta["bulwark/untrusted"].(map[string]any); ok && len(u) == 1 {
			if src, ok := u["source"].(string); ok {
				b = append(b, `{"bulwark/untrusted":{"source":`...)
				b = jsonscan.AppendHTMLString(b, src)
				if info != nil { // "bulwark/..." sorts before "io.modelcontextprotocol/..."
					b = append(b, `},"`+mcp.MetaKeyServerInfo+`":`...)
					return append(append(b, info...), '}'), nil
				}
				return append(b, "}}"...), nil
			}
		}
	}
	if info != nil {
		meta = maps.Clone(meta)
		meta[mcp.MetaKeyServerInfo] = impl
	}
	v, err := json.Marshal(meta)
	return append(b, v...), err
}

// withServerInfo is res with impl added to a copy of its _meta.
func withServerInfo(res *mcp.CallToolResult, impl *mcp.Implementation) *mcp.CallToolResult {
	out := *res
	out.Meta = maps.Clone(res.Meta)
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[mcp.MetaKeyServerInfo] = impl
	return &out
}

// lists encodes the tools/list results once, as the go-sdk pages them
// (sorted by name, one page).
func (f *fastTools) lists() (fastList, error) {
	tools := slices.Clone(f.tools)
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	if tools == nil {
		tools = []*mcp.Tool{}
	}
	res := &mcp.ListToolsResult{Tools: tools}
	res.CacheScope = "public"
	legacy, err := marshalWire(res)
	if err != nil {
		return fastList{}, err
	}
	res.ResultType = "complete"
	res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: f.impl}
	modern, err := marshalWire(res)
	return fastList{legacy: legacy, modern: modern}, err
}

// fastBufs holds the buffers responses are built in; one larger than
// maxPooledBuf is left to the collector rather than kept.
var fastBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBuf = 64 << 10

// appendResponse appends a JSON-RPC response as the go-sdk's wire encoder
// writes it, {"jsonrpc":"2.0","id":ID,"result":R}, its result appended by
// result. Both fronts write their answers with it.
func appendResponse(b, id []byte, result func([]byte) ([]byte, error)) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b, err := result(b)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// getBuf and putBuf lend the pooled buffers responses are built in.
func getBuf() *[]byte { return fastBufs.Get().(*[]byte) }

func putBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledBuf {
		fastBufs.Put(bp)
	}
}

// writeFast writes a JSON-RPC response with the go-sdk's headers, its
// result appended by result to a pooled buffer (w.Write copies it).
func writeFast(w http.ResponseWriter, id []byte, result func([]byte) ([]byte, error)) {
	bp := getBuf()
	defer putBuf(bp)
	b, err := appendResponse((*bp)[:0], id, result)
	*bp = b
	if err != nil {
		// Unreachable: a result the tool layer built always encodes.
		httpguard.WriteError(w, http.StatusInternalServerError, json.RawMessage(id), -32603, "internal error", nil)
		return
	}
	h := w.Header()
	h["Cache-Control"], h["Content-Type"] = fastCacheControl, fastContentType
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// The values of writeFast's headers, shared by every response (what
// Header.Set would store, without its two allocations): capacity one, so
// that a Header.Add appends to a copy; net/http and the guards replace or
// read header values, never write into them.
var (
	fastCacheControl = []string{"no-cache, no-transform"}[:1:1]
	fastContentType  = []string{"application/json"}[:1:1]
)

// marshalWire encodes like the go-sdk's wire encoder: encoding/json without
// HTML escaping, no trailing newline.
func marshalWire(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// server/discover (2026-07-28, SEP-2575) on the fast path. Its result is
// static per server — the supported versions, the capabilities, the
// instructions and, in _meta, the server's identity — and depends on
// nothing the request carries once the request is valid (the go-sdk reads
// the client's _meta only to record it on a session the stateless handler
// throws away). So the fast path asks the go-sdk itself once, when the
// handler is built, and keeps the result's bytes: byte for byte the go-sdk's
// answer by construction, whatever a later go-sdk adds to it. The requests
// the fast path answers with it are the ones fastEligible lets through: a
// 2026-07-28 request with valid _meta and no other params members; a legacy
// request (which the go-sdk refuses, -32601), a bad _meta or anything odd
// goes to the go-sdk as before. TestFastPathEquivalence compares them.

// discoverProbe is the request the result is captured with.
const discoverProbe = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"` + fastModernVersion + `",` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

// discoverResult returns the go-sdk's server/discover result for this
// server, encoded, or nil (the fast path then leaves server/discover to the
// go-sdk) when the go-sdk does not answer it with a plain JSON result.
func discoverResult(sdk http.Handler) []byte {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+MCPPath, strings.NewReader(discoverProbe))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", fastModernVersion)
	r.Header.Set("Mcp-Method", "server/discover")
	rec := httptest.NewRecorder()
	sdk.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		return nil
	}
	var resp struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	// The body is {"jsonrpc":"2.0","id":1,"result":R}: R's bytes are kept
	// as written (json.RawMessage is a verbatim copy).
	if json.Unmarshal(rec.Body.Bytes(), &resp) != nil || string(resp.ID) != "1" || len(resp.Result) == 0 || resp.Result[0] != '{' {
		return nil
	}
	want := `{"jsonrpc":"2.0","id":1,"result":` + string(resp.Result) + `}`
	if rec.Body.String() != want {
		return nil // a shape writeFast would not reproduce
	}
	return resp.Result
}
