package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/internal/taint"
	"github.com/bulwarkmcp/bulwark/kernel"
)

// FuzzTaintedResult is the taint harness on the relayed call's result
// path: any tools/call result an upstream writes — seeded with the hostile
// upstream's results in every encoding — decoded, shaped by the gateway
// and the kernel and sent over HTTP, reaches the client with no secret in
// any decoding, no envelope tag outside the envelope and nothing cleaning
// removes (the checker of internal/taint, which shares no code with the
// gate).
func FuzzTaintedResult(f *testing.F) {
	for _, e := range taint.Encodings {
		if e.Limit {
			continue
		}
		for _, r := range taint.HostileResults(e) {
			f.Add(r)
		}
	}
	g := &Gateway{scrub: &scrubber{}}
	env := g.Envelope()
	g.env = &env
	l := &link{u: &Upstream{Name: "taint"}, g: g}
	var mu sync.Mutex
	var current []byte
	tool := kernel.NewDynamicTool(kernel.DynamicSpec{Name: "taint.t", Description: "relays", Schema: &jsonschema.Schema{Type: "object"},
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(context.Context, *kernel.Call, json.RawMessage) (any, error) {
			mu.Lock()
			raw := current
			mu.Unlock()
			res, err := decodeCallResult(raw)
			if err != nil {
				return nil, kernel.Errorf(kernel.UpstreamError, "undecodable")
			}
			return g.result(l, "t", res)
		}})
	ks, err := kernel.New(kernel.Info{Name: "bulwark-gateway"}, []kernel.Tool{tool}, &kernel.Options{Envelope: env, Secrets: []string{taint.Marker}})
	if err != nil {
		f.Fatal(err)
	}
	h, err := ks.HTTPHandler(kernel.HTTPOptions{Addr: "127.0.0.1:8080"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		mu.Lock()
		current = raw
		mu.Unlock()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"taint.t","arguments":{}}}`
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080"+kernel.MCPPath, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		r.RemoteAddr = "127.0.0.1:40000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		c := taint.NewChecker(taint.Marker)
		c.Body(w.Header().Get("Content-Type"), w.Body.Bytes())
		for _, fd := range c.Findings {
			t.Errorf("%s", fd)
		}
	})
}
