package httpguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// MetaKeyProtocolVersion is the _meta key that carries a 2026-07-28
// request's protocol version.
const MetaKeyProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// metaKeyLogLevel is the _meta key of a 2026-07-28 request's log level.
const metaKeyLogLevel = "io.modelcontextprotocol/logLevel"

// Envelope is the part of a JSON-RPC message the kernel's policy stages need:
// parsed once per request, reused by the header-agreement guard, the tier
// check, the rate limiter and the audit record. Every field comes from the
// body; mirrored headers never feed it.
type Envelope struct {
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
}

// IsNotification reports whether e is a notification (a method, no id).
func (e Envelope) IsNotification() bool { return e.Method != "" && e.ID == nil }

// Target returns what Mcp-Name mirrors: params.name for tools/call and
// prompts/get, params.uri for resources/read. ok is false for other methods.
func (e Envelope) Target() (target string, ok bool) {
	switch e.Method {
	case "tools/call", "prompts/get":
		return e.Name, true
	case "resources/read":
		return e.URI, true
	}
	return "", false
}

// ParseEnvelope decodes one JSON-RPC message, reading only the members the
// kernel needs and skipping (but validating) the rest. It is stricter than a
// general decoder on purpose, so no other decoder can read the same bytes
// differently: keys match exactly (case-sensitive, like the go-sdk's
// decoder), duplicate members that matter are refused, the extracted strings
// must be valid UTF-8, trailing data is refused and nesting is capped at
// 1000 levels.
//
// Errors: ErrInvalidJSON (not JSON), ErrBatch (a JSON array) and
// ErrInvalidEnvelope (JSON, but not one JSON-RPC 2.0 message MCP accepts:
// a null, boolean or object id, non-object params, a missing jsonrpc "2.0").
func ParseEnvelope(data []byte) (Envelope, error) {
	s := jsonscan.Scanner{Data: data}
	s.SkipSpace()
	if s.Pos >= len(s.Data) {
		return Envelope{}, ErrInvalidJSON
	}
	if s.Data[s.Pos] != '{' {
		err := ErrInvalidEnvelope
		if s.Data[s.Pos] == '[' {
			err = ErrBatch
		}
		if s.Skip(0) != nil || !s.AtEnd() {
			err = ErrInvalidJSON
		}
		return Envelope{}, err
	}
	var p envParser
	if err := p.object(&s); err != nil {
		return Envelope{}, scanError(err)
	}
	if !s.AtEnd() {
		return Envelope{}, ErrInvalidJSON
	}
	return p.finish()
}

// RequestEnvelope returns the request's envelope, reading the body (through
// ReadBody's cache) and parsing it on first use; later calls in the same
// request return the same result without reading or parsing again.
func RequestEnvelope(r *http.Request) (Envelope, error) {
	st := stateFrom(r.Context())
	if st != nil && st.envDone {
		return st.env, st.envErr
	}
	var data []byte
	var err error
	if st != nil && st.body.installed {
		data, err = st.body.bytes() // internal use: the buffer stays recyclable
	} else {
		data, err = ReadBody(r)
	}
	var env Envelope
	if err == nil {
		env, err = ParseEnvelope(data)
	}
	if st != nil {
		st.envDone, st.env, st.envErr = true, env, err
	}
	return env, err
}

// EnvelopeFromContext returns the envelope already parsed for the request
// whose context this is. ok is false when none was parsed (or parsing failed).
func EnvelopeFromContext(ctx context.Context) (env Envelope, ok bool) {
	st := stateFrom(ctx)
	if st == nil || !st.envDone || st.envErr != nil {
		return Envelope{}, false
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
)

// envParser collects the members of one message; values are subslices of
// the input until finish copies what it keeps.
type envParser struct {
	seen                      int
	jsonrpc, id, method       []byte
	name, uri, version        []byte // raw JSON values (strings when used)
	jsonrpcEsc, methodEsc     bool
	nameEsc, uriEsc, verEsc   bool
	nameStr, uriStr, verIsStr bool
	notify                    bool // progressToken or logLevel in _meta
}

func (p *envParser) mark(bit int) error {
	if p.seen&bit != 0 {
		return fmt.Errorf("duplicate member: %w", ErrInvalidEnvelope)
	}
	p.seen |= bit
	return nil
}

func (p *envParser) object(s *jsonscan.Scanner) error {
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

func (p *envParser) str(s *jsonscan.Scanner, bit int, dst *[]byte, esc *bool) error {
	if err := p.mark(bit); err != nil {
		return err
	}
	if s.Peek() != '"' {
		if s.Skip(1) != nil {
			return ErrInvalidJSON
		}
		return fmt.Errorf("member is not a string: %w", ErrInvalidEnvelope)
	}
	raw, e, err := s.String()
	*dst, *esc = raw, e
	return err
}

func (p *envParser) skip(s *jsonscan.Scanner, bit int) error {
	if err := p.mark(bit); err != nil {
		return err
	}
	return s.Skip(1)
}

func (p *envParser) idValue(s *jsonscan.Scanner) error {
	if err := p.mark(seenID); err != nil {
		return err
	}
	c := s.Peek()
	start := s.Pos
	if err := s.Skip(1); err != nil {
		return err
	}
	if c != '"' && c != '-' && (c < '0' || c > '9') {
		return fmt.Errorf("id must be a string or a number: %w", ErrInvalidEnvelope)
	}
	p.id = s.Data[start:s.Pos]
	return nil
}

func (p *envParser) params(s *jsonscan.Scanner) error {
	if err := p.mark(seenParams); err != nil {
		return err
	}
	switch s.Peek() {
	case 'n':
		return s.Skip(1) // null params: as if absent
	case '{':
	default:
		if s.Skip(1) != nil {
			return ErrInvalidJSON
		}
		return fmt.Errorf("params must be an object: %w", ErrInvalidEnvelope)
	}
	return s.Members(2, func(key []byte) error {
		switch string(key) {
		case "name":
			return p.maybeStr(s, seenName, &p.name, &p.nameEsc, &p.nameStr)
		case "uri":
			return p.maybeStr(s, seenURI, &p.uri, &p.uriEsc, &p.uriStr)
		case "_meta":
			return p.meta(s)
		}
		return s.Skip(2)
	})
}

// maybeStr records a member that is used only when it is a string.
func (p *envParser) maybeStr(s *jsonscan.Scanner, bit int, dst *[]byte, esc, isStr *bool) error {
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

func (p *envParser) meta(s *jsonscan.Scanner) error {
	if err := p.mark(seenMeta); err != nil {
		return err
	}
	if s.Peek() != '{' {
		return s.Skip(2)
	}
	return s.Members(3, func(key []byte) error {
		switch string(key) {
		case MetaKeyProtocolVersion:
			return p.maybeStr(s, seenVersion, &p.version, &p.verEsc, &p.verIsStr)
		case "progressToken", metaKeyLogLevel:
			p.notify = true
		}
		return s.Skip(3)
	})
}

func (p *envParser) finish() (Envelope, error) {
	var env Envelope
	var err error
	if p.seen&seenJSONRPC == 0 {
		return env, fmt.Errorf("missing jsonrpc member: %w", ErrInvalidEnvelope)
	}
	if v, e := decodeStr(p.jsonrpc, p.jsonrpcEsc); e != nil || v != "2.0" {
		return env, fmt.Errorf("jsonrpc must be \"2.0\": %w", ErrInvalidEnvelope)
	}
	hasMethod := p.seen&seenMethod != 0
	answered := p.seen&(seenResult|seenError) != 0
	switch {
	case hasMethod && answered:
		return env, fmt.Errorf("both method and result or error: %w", ErrInvalidEnvelope)
	case !hasMethod && (!answered || p.id == nil):
		return env, fmt.Errorf("neither a request nor a response: %w", ErrInvalidEnvelope)
	}
	env.Response = answered
	env.WantsNotifications = p.notify
	if p.id != nil {
		env.ID = append(json.RawMessage(nil), p.id...)
	}
	if env.Method, err = decodeStr(p.method, p.methodEsc); err != nil {
		return Envelope{}, err
	}
	if hasMethod && env.Method == "" {
		return Envelope{}, fmt.Errorf("empty method: %w", ErrInvalidEnvelope)
	}
	if p.nameStr {
		if env.Name, err = decodeStr(p.name, p.nameEsc); err != nil {
			return Envelope{}, err
		}
	}
	if p.uriStr {
		if env.URI, err = decodeStr(p.uri, p.uriEsc); err != nil {
			return Envelope{}, err
		}
	}
	if p.verIsStr {
		if env.ProtocolVersion, err = decodeStr(p.version, p.verEsc); err != nil {
			return Envelope{}, err
		}
	}
	return env, nil
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
		return fmt.Errorf("%w: %w", ErrInvalidEnvelope, err)
	case errors.Is(err, jsonscan.ErrSyntax), errors.Is(err, jsonscan.ErrDepth):
		return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	return err
}
