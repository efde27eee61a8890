package kernel

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
)

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
