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
		{"no id", nil, errorData{Error: "cors_forbidden"}, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":{"error":"cors_forbidden"}}}`},
		{"numeric id", json.RawMessage(`7`), nil, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"m"}}`},
		{"string id", json.RawMessage(`"a"`), nil, `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"m"}}`},
		{"invalid id dropped", json.RawMessage(`{`), nil, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}`},
		{"unencodable data dropped", nil, func() {}, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, http.StatusForbidden, tt.id, codeInvalidRequest, "m", tt.data)
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
		{errHostForbidden, 403, codeInvalidRequest, reasonHostForbidden},
		{fmt.Errorf("x: %w", errOriginForbidden), 403, codeInvalidRequest, reasonCORSForbidden},
		{errMethodNotAllowed, 405, codeInvalidRequest, reasonMethodNotAllowed},
		{errUnsupportedMediaType, 415, codeInvalidRequest, reasonUnsupportedMediaType},
		{errUnsupportedEncoding, 415, codeInvalidRequest, reasonUnsupportedEncoding},
		{errNotAcceptable, 406, codeInvalidRequest, reasonNotAcceptable},
		{errBodyTooLarge, 413, codeInvalidRequest, reasonBodyTooLarge},
		{errBadBody, 400, codeInvalidRequest, reasonBadBody},
		{mismatch("x"), 400, codeHeaderMismatch, reasonHeaderMismatch},
		{errInvalidJSON, 400, codeParseError, reasonParseError},
		{errBatch, 400, codeInvalidRequest, reasonBatchUnsupported},
		{errInvalidMessage, 400, codeInvalidRequest, reasonInvalidRequest},
		{errors.New("secret detail"), 400, codeInvalidRequest, reasonInvalidRequest},
		{&rateLimitError{RetryAfter: 1500 * time.Millisecond}, 429, codeRateLimited, reasonRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			rec := httptest.NewRecorder()
			writeCheckError(rec, nil, tt.err)
			var body struct {
				Error struct {
					Code    int
					Message string
					Data    errorData
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
