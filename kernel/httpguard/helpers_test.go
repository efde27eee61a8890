package httpguard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// okHandler answers 200 "ok" after reading the whole body, as the SDK does.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if _, err := io.ReadAll(r.Body); err != nil {
		http.Error(w, "next handler read: "+err.Error(), http.StatusTeapot)
		return
	}
	io.WriteString(w, "ok")
})

// wireReq is one request sent through a real listener.
type wireReq struct {
	method  string
	host    string            // Host header; empty keeps the listener's
	headers map[string]string // each set once
	multi   map[string][]string
	body    string
	chunked bool // send the body without Content-Length
}

type wireResp struct {
	status int
	header http.Header
	body   string
	rpc    struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Error string `json:"error"`
			} `json:"data"`
		} `json:"error"`
	}
}

func serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func send(t testing.TB, srv *httptest.Server, q wireReq) wireResp {
	t.Helper()
	method := q.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader = strings.NewReader(q.body)
	if q.chunked {
		body = io.NopCloser(body) // unknown length: chunked encoding
	}
	req, err := http.NewRequest(method, srv.URL+"/mcp", body)
	if err != nil {
		t.Fatal(err)
	}
	if q.host != "" {
		req.Host = q.host
	}
	for k, v := range q.headers {
		req.Header.Set(k, v)
	}
	for k, vs := range q.multi {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := wireResp{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && method != http.MethodHead {
		if err := json.Unmarshal(b, &out.rpc); err != nil {
			t.Fatalf("error body is not JSON: %v: %q", err, b)
		}
	}
	return out
}

// wantRefusal asserts a JSON-RPC error answer.
func wantRefusal(t *testing.T, got wireResp, status, code int, reason string) {
	t.Helper()
	if got.status != status {
		t.Fatalf("status = %d, want %d (body %q)", got.status, status, got.body)
	}
	if ct := got.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	if got.rpc.JSONRPC != "2.0" || got.rpc.Error.Code != code || got.rpc.Error.Data.Error != reason {
		t.Fatalf("body = %s, want code %d reason %q", got.body, code, reason)
	}
	if !strings.HasPrefix(got.rpc.Error.Message, reason) && reason != reasonRateLimited {
		t.Fatalf("message %q does not start with %q", got.rpc.Error.Message, reason)
	}
}

func wantOK(t *testing.T, got wireResp) {
	t.Helper()
	if got.status != http.StatusOK || got.body != "ok" {
		t.Fatalf("status %d body %q, want 200 ok", got.status, got.body)
	}
}
