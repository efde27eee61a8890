package httpguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestWriteError(t *testing.T) {
	tests := []struct {
		name string
		id   json.RawMessage
		data any
		want string
	}{
		{"no id", nil, ErrorData{Error: "cors_forbidden"}, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":{"error":"cors_forbidden"}}}`},
		{"numeric id", json.RawMessage(`7`), nil, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"m"}}`},
		{"string id", json.RawMessage(`"a"`), nil, `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"m"}}`},
		{"invalid id dropped", json.RawMessage(`{`), nil, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}`},
		{"unencodable data dropped", nil, func() {}, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, http.StatusForbidden, tt.id, CodeInvalidRequest, "m", tt.data)
			if rec.Code != http.StatusForbidden || rec.Body.String() != tt.want {
				t.Fatalf("got %d %s, want 403 %s", rec.Code, rec.Body, tt.want)
			}
			for k, v := range map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestWriteCheckError(t *testing.T) {
	tests := []struct {
		err    error
		status int
		code   int
		reason string
	}{
		{ErrHostForbidden, 403, CodeInvalidRequest, ReasonHostForbidden},
		{fmt.Errorf("x: %w", ErrOriginForbidden), 403, CodeInvalidRequest, ReasonCORSForbidden},
		{ErrMethodNotAllowed, 405, CodeInvalidRequest, ReasonMethodNotAllowed},
		{ErrUnsupportedMediaType, 415, CodeInvalidRequest, ReasonUnsupportedMediaType},
		{ErrUnsupportedEncoding, 415, CodeInvalidRequest, ReasonUnsupportedEncoding},
		{ErrNotAcceptable, 406, CodeInvalidRequest, ReasonNotAcceptable},
		{ErrBodyTooLarge, 413, CodeInvalidRequest, ReasonBodyTooLarge},
		{ErrBadBody, 400, CodeInvalidRequest, ReasonBadBody},
		{mismatch("x"), 400, CodeHeaderMismatch, ReasonHeaderMismatch},
		{ErrInvalidJSON, 400, CodeParseError, ReasonParseError},
		{ErrBatch, 400, CodeInvalidRequest, ReasonBatchUnsupported},
		{ErrInvalidMessage, 400, CodeInvalidRequest, ReasonInvalidRequest},
		{errors.New("secret detail"), 400, CodeInvalidRequest, ReasonInvalidRequest},
		{&RateLimitError{RetryAfter: 1500 * time.Millisecond}, 429, CodeRateLimited, ReasonRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteCheckError(rec, nil, tt.err)
			var body struct {
				Error struct {
					Code    int
					Message string
					Data    ErrorData
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tt.status || body.Error.Code != tt.code || body.Error.Data.Error != tt.reason {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
			if tt.status == 429 && (rec.Header().Get("Retry-After") != "2" || body.Error.Message[len(body.Error.Message)-len("Resets in 2s."):] != "Resets in 2s.") {
				t.Fatalf("rate limit answer: Retry-After %q message %q", rec.Header().Get("Retry-After"), body.Error.Message)
			}
			if strings.Contains(rec.Body.String(), "secret") {
				t.Fatal("unknown error text leaked")
			}
		})
	}
}
