package kernel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// The audit record is the one record of a call: besides the kernel's own
// fields it carries the upstream retries and bytes, the answers a server
// took from its cache, and the server's own attributes (vdb's AI status,
// its credential scheme), bounded and scrubbed like the rest.
func TestAuditCarriesTheServersNotes(t *testing.T) {
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable) // retried once
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	client := upstream.New(&upstream.Options{Retry: upstream.RetryPolicy{MaxAttempts: 2},
		Sleep: func(context.Context, time.Duration) error { return nil }})
	tool := kernel.NewTool(kernel.Spec[struct{}, any]{
		Name: "noted", Description: "Notes what it did.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, _ struct{}) (any, error) {
			if _, err := client.Do(ctx, &upstream.Request{Method: "GET", URL: u}); err != nil {
				return nil, err
			}
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(c.CacheHit)
			}
			wg.Wait()
			c.SetAuditAttr("ai", "failed")
			c.SetAuditAttr("ai", "ok")                      // the last value wins
			c.SetAuditAttr("echo", "k="+serverToken)        // scrubbed like the record
			c.SetAuditAttr("long", strings.Repeat("x", 65)) // over audit.MaxAttrLen: dropped
			c.SetAuditAttr(strings.Repeat("k", 65), "v")    // likewise
			for i := range audit.MaxAttrs + 4 {
				c.SetAuditAttr(string(rune('a'+i))+"_n", "v") // past audit.MaxAttrs: dropped
			}
			return map[string]any{}, nil
		},
	})
	var log mcptest.AuditLog
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool}, &kernel.Options{
		Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Value: serverToken}},
		Audit:       &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, srv, nil)
	if res := sess.Call(t, "noted", map[string]any{}); res.IsError {
		t.Fatal(mcptest.Text(res))
	}
	recs := log.Records()
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.UpstreamCalls != 2 || r.UpstreamRetries != 1 || r.UpstreamBytesIn != int64(len(`{"ok":true}`)) || r.CacheHits != 2 {
		t.Errorf("record %+v", r)
	}
	if len(r.Attrs) != audit.MaxAttrs || r.Attrs["ai"] != "ok" || r.Attrs["echo"] != "k=[redacted]" || r.Attrs["long"] != "" {
		t.Errorf("attrs %v", r.Attrs)
	}
}
