package httpguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// metaKeyProtocolVersion is the _meta key that carries a 2026-07-28
// request's protocol version.
const metaKeyProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// metaKeyLogLevel is the _meta key of a 2026-07-28 request's log level.
const metaKeyLogLevel = "io.modelcontextprotocol/logLevel"

// Message is the part of a JSON-RPC message the kernel's policy stages need:
// parsed once per request, reused by the header-agreement guard, the tier
// check, the rate limiter and the audit record. Every field comes from the
// body; mirrored headers never feed it.
type Message struct {
	// ID is the raw JSON id (a string or a number), nil for a notification.
	ID json.RawMessage
	// Method is the request's method; empty for a response.
	Method string
	// Name is params.name when it is a string.
	Name string
	// URI is params.uri when it is a string.
	URI string
	// ProtocolVersion is params._meta["io.modelcontextprotocol/protocolVersion"]
	// when it is a string.
	ProtocolVersion string
	// Response is true for a JSON-RPC response (result or error, no method).
	Response bool
	// WantsNotifications is true when params._meta carries a progressToken
	// or a 2026-07-28 log level: the client expects notifications during
	// the call, so the answer must be an event stream.
	WantsNotifications bool
	// Arguments is params.arguments as sent (any JSON value, copied), nil
	// when absent: the kernel's fast path hands it to the tool layer
	// without decoding the body again.
	Arguments json.RawMessage
	// Meta is params._meta as sent (an object, copied), nil when absent.
	Meta json.RawMessage
	// OtherParams is true when params carries a member other than name,
	// arguments and _meta, or a name that is not a string, or a _meta that
	// is not an object: the fast path leaves such requests to the go-sdk.
	OtherParams bool
}

// isNotification reports whether e is a notification (a method, no id).
func (e Message) isNotification() bool { return e.Method != "" && e.ID == nil }

// Target returns what Mcp-Name mirrors: params.name for tools/call and
// prompts/get, params.uri for resources/read. ok is false for other methods.
func (e Message) Target() (target string, ok bool) {
	switch e.Method {
	case "tools/call", "prompts/get":
		return e.Name, true
	case "resources/read":
		return e.URI, true
	}
	return "", false
}

// ParseMessage decodes one JSON-RPC message, reading only the members the
// kernel needs and skipping (but validating) the rest. It is stricter than a
// general decoder on purpose, so no other decoder can read the same bytes
// differently: keys match exactly (case-sensitive, like the go-sdk's
// decoder), duplicate members that matter are refused, the extracted strings
// must be valid UTF-8, trailing data is refused and nesting is capped at
// 1000 levels.
//
// Errors: errInvalidJSON (not JSON), errBatch (a JSON array) and
// errInvalidMessage (JSON, but not one JSON-RPC 2.0 message MCP accepts:
// a null, boolean or object id, a numeric id that is not an integer of at
// most 2^53 written in digits, non-object params, a missing jsonrpc "2.0", a repeated
// params.arguments).
func ParseMessage(data []byte) (Message, error) {
	s := jsonscan.Scanner{Data: data}
	s.SkipSpace()
	if s.Pos >= len(s.Data) {
		return Message{}, errInvalidJSON
	}
	if s.Data[s.Pos] != '{' {
		err := errInvalidMessage
		if s.Data[s.Pos] == '[' {
			err = errBatch
		}
		if s.Skip(0) != nil || !s.AtEnd() {
			err = errInvalidJSON
		}
		return Message{}, err
	}
	var p msgParser
	if err := p.object(&s); err != nil {
		return Message{}, scanError(err)
	}
	if !s.AtEnd() {
		return Message{}, errInvalidJSON
	}
	return p.finish()
}

// RequestMessage returns the request's message, reading the body (through
// readBody's cache) and parsing it on first use; later calls in the same
// request return the same result without reading or parsing again.
func RequestMessage(r *http.Request) (Message, error) {
	st := stateFrom(r.Context())
	if st != nil && st.envDone {
		return st.env, st.envErr
	}
	var data []byte
	var err error
	if st != nil && st.body.installed {
		data, err = st.body.bytes() // internal use: the buffer stays recyclable
	} else {
		data, err = readBody(r)
	}
	var env Message
	if err == nil {
		env, err = ParseMessage(data)
	}
	if st != nil {
		st.envDone, st.env, st.envErr = true, env, err
	}
	return env, err
}

// messageFromContext returns the message already parsed for the request
// whose context this is. ok is false when none was parsed (or parsing failed).
func messageFromContext(ctx context.Context) (env Message, ok bool) {
	st := stateFrom(ctx)
	if st == nil || !st.envDone || st.envErr != nil {
		return Message{}, false
	}
	return st.env, true
}

const (
	seenJSONRPC = 1 << iota
	seenID
	seenMethod
	seenParams
	seenResult
	seenError
	seenName
	seenURI
	seenMeta
	seenVersion
	seenArguments
)

// msgParser collects the members of one message; values are subslices of
// the input until finish copies what it keeps.
type msgParser struct {
	seen                      int
	jsonrpc, id, method       []byte
	name, uri, version        []byte // raw JSON values (strings when used)
	jsonrpcEsc, methodEsc     bool
	nameEsc, uriEsc, verEsc   bool
	nameStr, uriStr, verIsStr bool
	notify                    bool   // progressToken or logLevel in _meta
	args                      []byte // raw params.arguments
	metaRaw                   []byte // raw params._meta
	other                     bool   // see Message.OtherParams
}

func (p *msgParser) mark(bit int) error {
	if p.seen&bit != 0 {
		return fmt.Errorf("duplicate member: %w", errInvalidMessage)
	}
	p.seen |= bit
	return nil
}

func (p *msgParser) object(s *jsonscan.Scanner) error {
	return s.Members(1, func(key []byte) error {
		switch string(key) {
		case "jsonrpc":
			return p.str(s, seenJSONRPC, &p.jsonrpc, &p.jsonrpcEsc)
		case "method":
			return p.str(s, seenMethod, &p.method, &p.methodEsc)
		case "id":
			return p.idValue(s)
		case "params":
			return p.params(s)
		case "result":
			return p.skip(s, seenResult)
		case "error":
			return p.skip(s, seenError)
		}
		return s.Skip(1)
	})
}

func (p *msgParser) str(s *jsonscan.Scanner, bit int, dst *[]byte, esc *bool) error {
	if err := p.mark(bit); err != nil {
		return err
	}
	if s.Peek() != '"' {
		if s.Skip(1) != nil {
			return errInvalidJSON
		}
		return fmt.Errorf("member is not a string: %w", errInvalidMessage)
	}
	raw, e, err := s.String()
	*dst, *esc = raw, e
	return err
}

func (p *msgParser) skip(s *jsonscan.Scanner, bit int) error {
	if err := p.mark(bit); err != nil {
		return err
	}
	return s.Skip(1)
}

func (p *msgParser) idValue(s *jsonscan.Scanner) error {
	if err := p.mark(seenID); err != nil {
		return err
	}
	c := s.Peek()
	start := s.Pos
	if err := s.Skip(1); err != nil {
		return err
	}
	if c != '"' && c != '-' && (c < '0' || c > '9') {
		return fmt.Errorf("id must be a string or a number: %w", errInvalidMessage)
	}
	p.id = s.Data[start:s.Pos]
	if c != '"' && !exactID(p.id) {
		return fmt.Errorf("id must be a string or an integer of at most 2^53: %w", errInvalidMessage)
	}
	return nil
}

// maxExactID is the largest integer every JSON number reader holds exactly
// (a float64 has 53 bits of mantissa).
const maxExactID = 1 << 53

// exactID reports whether a numeric id is an integer, written without a
// fraction or exponent (JSON-RPC: numbers SHOULD NOT contain fractional
// parts), that the go-sdk gives back as sent: it reads ids as float64 and
// answers with their int64 value, so 1e400 overflowed its decoder (which
// then answered a text/plain 400 naming Go types), 1.5 came back as 1 and
// 2^53+1 as 2^53.
func exactID(raw []byte) bool {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && -maxExactID <= n && n <= maxExactID
}

func (p *msgParser) params(s *jsonscan.Scanner) error {
	if err := p.mark(seenParams); err != nil {
		return err
	}
	switch s.Peek() {
	case 'n':
		return s.Skip(1) // null params: as if absent
	case '{':
	default:
		if s.Skip(1) != nil {
			return errInvalidJSON
		}
		return fmt.Errorf("params must be an object: %w", errInvalidMessage)
	}
	return s.Members(2, func(key []byte) error {
		switch string(key) {
		case "name":
			p.other = p.other || s.Peek() != '"'
			return p.maybeStr(s, seenName, &p.name, &p.nameEsc, &p.nameStr)
		case "uri":
			p.other = true
			return p.maybeStr(s, seenURI, &p.uri, &p.uriEsc, &p.uriStr)
		case "_meta":
			p.other = p.other || s.Peek() != '{'
			return p.meta(s)
		case "arguments": // decoders keep the first or the last: refuse two
			if err := p.mark(seenArguments); err != nil {
				return err
			}
			s.Peek() // past the whitespace: the value alone, as decoders keep it
			start := s.Pos
			err := s.Skip(2)
			p.args = s.Data[start:s.Pos]
			return err
		}
		p.other = true
		return s.Skip(2)
	})
}

// maybeStr records a member that is used only when it is a string.
func (p *msgParser) maybeStr(s *jsonscan.Scanner, bit int, dst *[]byte, esc, isStr *bool) error {
	if err := p.mark(bit); err != nil {
		return err
	}
	if s.Peek() != '"' {
		return s.Skip(2)
	}
	raw, e, err := s.String()
	*dst, *esc, *isStr = raw, e, true
	return err
}

func (p *msgParser) meta(s *jsonscan.Scanner) error {
	if err := p.mark(seenMeta); err != nil {
		return err
	}
	if s.Peek() != '{' {
		return s.Skip(2)
	}
	start := s.Pos
	err := s.Members(3, func(key []byte) error {
		switch string(key) {
		case metaKeyProtocolVersion:
			return p.maybeStr(s, seenVersion, &p.version, &p.verEsc, &p.verIsStr)
		case "progressToken", metaKeyLogLevel:
			p.notify = true
		}
		return s.Skip(3)
	})
	p.metaRaw = s.Data[start:s.Pos]
	return err
}

func (p *msgParser) finish() (Message, error) {
	var env Message
	var err error
	if p.seen&seenJSONRPC == 0 {
		return env, fmt.Errorf("missing jsonrpc member: %w", errInvalidMessage)
	}
	if v, e := decodeStr(p.jsonrpc, p.jsonrpcEsc); e != nil || v != "2.0" {
		return env, fmt.Errorf("jsonrpc must be \"2.0\": %w", errInvalidMessage)
	}
	hasMethod := p.seen&seenMethod != 0
	answered := p.seen&(seenResult|seenError) != 0
	switch {
	case hasMethod && answered:
		return env, fmt.Errorf("both method and result or error: %w", errInvalidMessage)
	case !hasMethod && (!answered || p.id == nil):
		return env, fmt.Errorf("neither a request nor a response: %w", errInvalidMessage)
	}
	env.Response = answered
	env.WantsNotifications = p.notify
	env.OtherParams = p.other
	// The raw members are copied out of the body (whose buffer is reused)
	// into one allocation, each capped so that appending to one never
	// writes into another.
	buf := make([]byte, 0, len(p.args)+len(p.metaRaw)+len(p.id))
	env.Arguments, buf = carve(buf, p.args)
	env.Meta, buf = carve(buf, p.metaRaw)
	env.ID, _ = carve(buf, p.id)
	if env.Method, err = decodeStr(p.method, p.methodEsc); err != nil {
		return Message{}, err
	}
	if hasMethod && env.Method == "" {
		return Message{}, fmt.Errorf("empty method: %w", errInvalidMessage)
	}
	if p.nameStr {
		if env.Name, err = decodeStr(p.name, p.nameEsc); err != nil {
			return Message{}, err
		}
	}
	if p.uriStr {
		if env.URI, err = decodeStr(p.uri, p.uriEsc); err != nil {
			return Message{}, err
		}
	}
	if p.verIsStr {
		if env.ProtocolVersion, err = decodeStr(p.version, p.verEsc); err != nil {
			return Message{}, err
		}
	}
	return env, nil
}

// carve copies raw to the end of buf, returning the copy, capped at its
// own length, and buf grown by it; an empty raw gives nil (as appending it
// to nil did).
func carve(buf, raw []byte) (json.RawMessage, []byte) {
	if len(raw) == 0 {
		return nil, buf
	}
	start := len(buf)
	buf = append(buf, raw...)
	return json.RawMessage(buf[start:len(buf):len(buf)]), buf
}

// knownStrings are method names and versions returned without allocating.
var knownStrings = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"2.0", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28",
		"initialize", "ping", "server/discover", "tools/list", "tools/call", "prompts/list", "prompts/get",
		"resources/list", "resources/read", "resources/templates/list", "resources/subscribe",
		"resources/unsubscribe", "completion/complete", "logging/setLevel",
		"notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/roots/list_changed",
	} {
		m[s] = s
	}
	return m
}()

// decodeStr turns a string's raw content (between the quotes) into a Go
// string, exactly as standard decoders do (jsonscan.DecodeString); invalid
// UTF-8 is refused.
func decodeStr(raw []byte, escaped bool) (string, error) {
	if !escaped {
		if known, ok := knownStrings[string(raw)]; ok {
			return known, nil
		}
	}
	v, err := jsonscan.DecodeString(raw, escaped)
	return v, scanError(err)
}

// scanError maps the scanner's errors to this package's: not JSON, or (a
// string that is not UTF-8) not a message MCP accepts. Other errors, the
// parser's own, pass as they are.
func scanError(err error) error {
	switch {
	case errors.Is(err, jsonscan.ErrUTF8):
		return fmt.Errorf("%w: %w", errInvalidMessage, err)
	case errors.Is(err, jsonscan.ErrSyntax), errors.Is(err, jsonscan.ErrDepth):
		return fmt.Errorf("%w: %w", errInvalidJSON, err)
	}
	return err
}
