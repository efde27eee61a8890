package httpguard

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// JSON-RPC error codes written by the guards.
//
// Transport refusals that have no MCP-defined code use the JSON-RPC standard
// code -32600 (Invalid Request): it is defined by JSON-RPC 2.0, lies outside
// the legacy band (-32000..-32019) that new implementations SHOULD NOT use and
// outside the band the MCP specification reserves (-32020..-32099). The HTTP
// status carries the precise reason and data.error a stable machine string.
const (
	// CodeParseError is JSON-RPC's code for a body that is not JSON.
	CodeParseError = -32700
	// CodeInvalidRequest is JSON-RPC's code for a request the server refuses
	// to consider: used for every transport refusal without a better code.
	CodeInvalidRequest = -32600
	// CodeHeaderMismatch is MCP's HeaderMismatch (2026-07-28, HTTP 400).
	CodeHeaderMismatch = -32020
	// CodeRateLimited is the legacy-band code the HuGR page uses for
	// rate limiting. MCP defines no rate-limit code; 2026-07-28 tolerates the
	// legacy band, and the clients already parse data.error "rate_limited".
	CodeRateLimited = -32000
)

// Stable machine-readable reasons carried in an error's data.error.
const (
	ReasonHostForbidden        = "host_forbidden"
	ReasonCORSForbidden        = "cors_forbidden"
	ReasonMethodNotAllowed     = "method_not_allowed"
	ReasonUnsupportedMediaType = "unsupported_media_type"
	ReasonUnsupportedEncoding  = "unsupported_encoding"
	ReasonNotAcceptable        = "not_acceptable"
	ReasonBodyTooLarge         = "body_too_large"
	ReasonBadBody              = "bad_body"
	ReasonRateLimited          = "rate_limited"
	ReasonHeaderMismatch       = "header_mismatch"
	ReasonParseError           = "parse_error"
	ReasonInvalidRequest       = "invalid_request"
	ReasonBatchUnsupported     = "batch_unsupported"
)

// Sentinel errors returned by the guards' Check methods. Use errors.Is.
var (
	ErrHostForbidden        = errors.New("host not allowed")
	ErrOriginForbidden      = errors.New("origin not allowed")
	ErrMethodNotAllowed     = errors.New("method not allowed")
	ErrUnsupportedMediaType = errors.New("content type must be application/json")
	ErrUnsupportedEncoding  = errors.New("content encoding must be identity")
	ErrNotAcceptable        = errors.New("accept must list application/json and text/event-stream")
	ErrBodyTooLarge         = errors.New("request body too large")
	ErrBadBody              = errors.New("request body could not be read")
	ErrRateLimited          = errors.New("rate limited")
	ErrHeaderMismatch       = errors.New("header mismatch")
	ErrInvalidJSON          = errors.New("body is not valid JSON")
	ErrInvalidEnvelope      = errors.New("body is not a valid JSON-RPC message")
	ErrBatch                = errors.New("JSON-RPC batches are not supported")
	ErrInvalidTraceparent   = errors.New("invalid traceparent")
	ErrInvalidTracestate    = errors.New("invalid tracestate")
	ErrInvalidHeaderValue   = errors.New("invalid header value")
	ErrInvalidConfig        = errors.New("invalid httpguard configuration")
)

// ErrorData is the data member of every error the guards write.
type ErrorData struct {
	Error string `json:"error"`
}

type errorObject struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Error   errorObject     `json:"error"`
}

// WriteError writes a JSON-RPC error response with the given HTTP status.
// A nil id is omitted, as MCP allows for errors raised before the body is
// read; data, when non-nil, becomes error.data. The response is never cached
// or sniffed.
func WriteError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string, data any) {
	if len(id) > 0 && !json.Valid(id) {
		id = nil
	}
	b, err := json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: errorObject{Code: code, Message: message, Data: data}})
	if err != nil { // data could not be encoded: drop it rather than write nothing
		b, _ = json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: errorObject{Code: code, Message: message}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// rejection is how a guard's error is answered.
type rejection struct {
	status  int
	code    int
	reason  string
	message string
}

// rejections maps each sentinel to its answer. Messages never echo request
// values, so nothing a client sent is reflected back.
var rejections = []struct {
	err error
	rej rejection
}{
	{ErrHostForbidden, rejection{http.StatusForbidden, CodeInvalidRequest, ReasonHostForbidden, "host_forbidden: Host header not allowed"}},
	{ErrOriginForbidden, rejection{http.StatusForbidden, CodeInvalidRequest, ReasonCORSForbidden, "cors_forbidden: origin not allowed"}},
	{ErrMethodNotAllowed, rejection{http.StatusMethodNotAllowed, CodeInvalidRequest, ReasonMethodNotAllowed, "method_not_allowed: only POST is allowed"}},
	{ErrUnsupportedMediaType, rejection{http.StatusUnsupportedMediaType, CodeInvalidRequest, ReasonUnsupportedMediaType, "unsupported_media_type: Content-Type must be application/json"}},
	{ErrUnsupportedEncoding, rejection{http.StatusUnsupportedMediaType, CodeInvalidRequest, ReasonUnsupportedEncoding, "unsupported_encoding: Content-Encoding must be identity"}},
	{ErrNotAcceptable, rejection{http.StatusNotAcceptable, CodeInvalidRequest, ReasonNotAcceptable, "not_acceptable: Accept must list application/json and text/event-stream"}},
	{ErrBodyTooLarge, rejection{http.StatusRequestEntityTooLarge, CodeInvalidRequest, ReasonBodyTooLarge, "body_too_large: request body exceeds the limit"}},
	{ErrBadBody, rejection{http.StatusBadRequest, CodeInvalidRequest, ReasonBadBody, "bad_body: request body could not be read"}},
	{ErrHeaderMismatch, rejection{http.StatusBadRequest, CodeHeaderMismatch, ReasonHeaderMismatch, "header_mismatch"}},
	{ErrInvalidJSON, rejection{http.StatusBadRequest, CodeParseError, ReasonParseError, "parse_error: body is not valid JSON"}},
	{ErrBatch, rejection{http.StatusBadRequest, CodeInvalidRequest, ReasonBatchUnsupported, "batch_unsupported: JSON-RPC batches are not supported"}},
	{ErrInvalidEnvelope, rejection{http.StatusBadRequest, CodeInvalidRequest, ReasonInvalidRequest, "invalid_request: body is not a valid JSON-RPC request"}},
}

// WriteCheckError answers a request refused by one of this package's Check
// functions (or by ReadBody or RequestEnvelope) with the matching status and
// JSON-RPC error. id may be nil. A *RateLimitError also sets Retry-After.
// Unknown errors become 400 invalid_request; their text is not written.
func WriteCheckError(w http.ResponseWriter, id json.RawMessage, err error) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		writeFloodRefusal(w, rl)
		return
	}
	rej := rejectionFor(err)
	msg := rej.message
	if rej.code == CodeHeaderMismatch {
		msg = err.Error() // built from fixed strings only; see agreement.go
	}
	WriteError(w, rej.status, id, rej.code, msg, ErrorData{Error: rej.reason})
}

func rejectionFor(err error) rejection {
	for _, r := range rejections {
		if errors.Is(err, r.err) {
			return r.rej
		}
	}
	return rejection{http.StatusBadRequest, CodeInvalidRequest, ReasonInvalidRequest, "invalid_request: request refused"}
}
