package observe

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGuardOf: one row per refusal shape the guards and authentication
// write.
func TestGuardOf(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{403, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":{"error":"host_forbidden"}}}`, guardHost},
		{403, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":{"error":"cors_forbidden"}}}`, guardCORS},
		{429, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"m","data":{"error":"rate_limited","retryAfterSeconds":3}}}`, guardFlood},
		{413, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":{"error":"body_too_large"}}}`, guardSize},
		{415, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":{"error":"unsupported_media_type"}}}`, guardContentType},
		{400, `{"jsonrpc":"2.0","error":{"code":-32020,"message":"m","data":{"error":"header_mismatch"}}}`, guardHeader},
		{401, `{"error":"invalid_token","message":"m","id":"x"}`, guardAuth},
		{401, ``, guardAuth},
		{400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":{"error":"something_new"}}}`, guardOther},
		{500, `not json`, guardOther},
	} {
		if got := guardOf(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("guardOf(%d, %s) = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
}

// TestRecorderKeepsBoundedHead: a refusal body of any size keeps at most
// maxHead bytes, and passes through whole.
func TestRecorderKeepsBoundedHead(t *testing.T) {
	w := httptest.NewRecorder()
	r := &recorder{ResponseWriter: w}
	r.WriteHeader(http.StatusBadRequest)
	big := strings.Repeat("x", 4<<20)
	for range 4 {
		r.Write([]byte(big))
	}
	if len(r.head) != maxHead || w.Body.Len() != 4*len(big) {
		t.Fatalf("kept %d bytes (want %d), passed %d", len(r.head), maxHead, w.Body.Len())
	}
}

// FuzzGuardOf: any body yields one of the fixed guard labels.
func FuzzGuardOf(f *testing.F) {
	f.Add(403, []byte(`{"error":{"data":{"error":"host_forbidden"}}}`))
	f.Add(401, []byte(`{"error":"invalid_token"}`))
	f.Add(400, []byte(`{"error":{"data":{"error":1}}}`))
	labels := map[string]bool{guardOther: true, guardAuth: true}
	for _, g := range reasonGuards {
		labels[g] = true
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if g := guardOf(status, body); !labels[g] {
			t.Fatalf("guardOf gave the label %q", g)
		}
	})
}
