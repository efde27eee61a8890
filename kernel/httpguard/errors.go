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
	// codeParseError is JSON-RPC's code for a body that is not JSON.
	codeParseError = -32700
	// codeInvalidRequest is JSON-RPC's code for a request the server refuses
	// to consider: used for every transport refusal without a better code.
	codeInvalidRequest = -32600
	// codeHeaderMismatch is MCP's HeaderMismatch (2026-07-28, HTTP 400).
	codeHeaderMismatch = -32020
	// codeRateLimited is the legacy-band code the HuGR page uses for
	// rate limiting. MCP defines no rate-limit code; 2026-07-28 tolerates the
	// legacy band, and the clients already parse data.error "rate_limited".
	codeRateLimited = -32000
)

// Stable machine-readable reasons carried in an error's data.error.
const (
	reasonHostForbidden        = "host_forbidden"
	reasonCORSForbidden        = "cors_forbidden"
	reasonMethodNotAllowed     = "method_not_allowed"
	reasonUnsupportedMediaType = "unsupported_media_type"
	reasonUnsupportedEncoding  = "unsupported_encoding"
	reasonNotAcceptable        = "not_acceptable"
	reasonBodyTooLarge         = "body_too_large"
	reasonBadBody              = "bad_body"
	reasonRateLimited          = "rate_limited"
	reasonHeaderMismatch       = "header_mismatch"
	reasonParseError           = "parse_error"
	reasonInvalidRequest       = "invalid_request"
	reasonBatchUnsupported     = "batch_unsupported"
)

// Sentinel errors returned by the guards' Check methods. Use errors.Is.
var (
	errHostForbidden        = errors.New("host not allowed")
	errOriginForbidden      = errors.New("origin not allowed")
	errMethodNotAllowed     = errors.New("method not allowed")
	errUnsupportedMediaType = errors.New("content type must be application/json")
	errUnsupportedEncoding  = errors.New("content encoding must be identity")
	errNotAcceptable        = errors.New("accept must list application/json and text/event-stream")
	errBodyTooLarge         = errors.New("request body too large")
	errBadBody              = errors.New("request body could not be read")
	errRateLimited          = errors.New("rate limited")
	errHeaderMismatch       = errors.New("header mismatch")
	errInvalidJSON          = errors.New("body is not valid JSON")
	errInvalidMessage       = errors.New("body is not a valid JSON-RPC message")
	errBatch                = errors.New("JSON-RPC batches are not supported")
	errInvalidTraceparent   = errors.New("invalid traceparent")
	errInvalidTracestate    = errors.New("invalid tracestate")
	errInvalidHeaderValue   = errors.New("invalid header value")
	errInvalidConfig        = errors.New("invalid httpguard configuration")
)

// errorData is the data member of every error the guards write.
type errorData struct {
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
	{errHostForbidden, rejection{http.StatusForbidden, codeInvalidRequest, reasonHostForbidden, "host_forbidden: Host header not allowed"}},
	{errOriginForbidden, rejection{http.StatusForbidden, codeInvalidRequest, reasonCORSForbidden, "cors_forbidden: origin not allowed"}},
	{errMethodNotAllowed, rejection{http.StatusMethodNotAllowed, codeInvalidRequest, reasonMethodNotAllowed, "method_not_allowed: only POST is allowed"}},
	{errUnsupportedMediaType, rejection{http.StatusUnsupportedMediaType, codeInvalidRequest, reasonUnsupportedMediaType, "unsupported_media_type: Content-Type must be application/json"}},
	{errUnsupportedEncoding, rejection{http.StatusUnsupportedMediaType, codeInvalidRequest, reasonUnsupportedEncoding, "unsupported_encoding: Content-Encoding must be identity"}},
	{errNotAcceptable, rejection{http.StatusNotAcceptable, codeInvalidRequest, reasonNotAcceptable, "not_acceptable: Accept must list application/json and text/event-stream"}},
	{errBodyTooLarge, rejection{http.StatusRequestEntityTooLarge, codeInvalidRequest, reasonBodyTooLarge, "body_too_large: request body exceeds the limit"}},
	{errBadBody, rejection{http.StatusBadRequest, codeInvalidRequest, reasonBadBody, "bad_body: request body could not be read"}},
	{errHeaderMismatch, rejection{http.StatusBadRequest, codeHeaderMismatch, reasonHeaderMismatch, "header_mismatch"}},
	{errInvalidJSON, rejection{http.StatusBadRequest, codeParseError, reasonParseError, "parse_error: body is not valid JSON"}},
	{errBatch, rejection{http.StatusBadRequest, codeInvalidRequest, reasonBatchUnsupported, "batch_unsupported: JSON-RPC batches are not supported"}},
	{errInvalidMessage, rejection{http.StatusBadRequest, codeInvalidRequest, reasonInvalidRequest, "invalid_request: body is not a valid JSON-RPC request"}},
}

// writeCheckError answers a request refused by one of this package's Check
// functions (or by readBody or RequestMessage) with the matching status and
// JSON-RPC error. id may be nil. A *rateLimitError also sets Retry-After.
// Unknown errors become 400 invalid_request; their text is not written.
func writeCheckError(w http.ResponseWriter, id json.RawMessage, err error) {
	var rl *rateLimitError
	if errors.As(err, &rl) {
		writeFloodRefusal(w, rl)
		return
	}
	rej := rejectionFor(err)
	msg := rej.message
	if rej.code == codeHeaderMismatch {
		msg = err.Error() // built from fixed strings only; see agreement.go
	}
	WriteError(w, rej.status, id, rej.code, msg, errorData{Error: rej.reason})
}

func rejectionFor(err error) rejection {
	for _, r := range rejections {
		if errors.Is(err, r.err) {
			return r.rej
		}
	}
	return rejection{http.StatusBadRequest, codeInvalidRequest, reasonInvalidRequest, "invalid_request: request refused"}
}
