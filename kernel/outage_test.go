package kernel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

// TestStoreOutage takes the shared store down mid-run and brings it back:
// refusals say what happened (503 store_unavailable, never "rate limit
// exceeded"), the log says it once per outage, a confirmation issued before
// the outage is not spent by it and confirms exactly once after, and service
// resumes by itself.
func TestStoreOutage(t *testing.T) {
	rs := newRefusalServer(t, 1000, kernel.StoreOutage{Setting: "--store-outage"})
	sess := mcptest.Connect(t, rs.srv, nil)
	read := map[string]any{"zone": "z", "name": "n"}
	del := map[string]any{"zone": "z", "name": "www"}
	tok := mcptest.ConfirmToken(t, sess.Call(t, "delete_item", del))

	rs.store.down.Store(true)
	for range 5 {
		resp, body := post(t, rs.url, callBody("get_item", read), nil)
		if resp.StatusCode != 503 || strings.Contains(body, "Rate limit") || !strings.Contains(body, `"store_unavailable"`) || resp.Header.Get("Retry-After") != "" {
			t.Fatalf("read during the outage over HTTP: %d %v %s", resp.StatusCode, resp.Header, body)
		}
		_, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_item", Arguments: with(del, "confirmToken", tok)})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != ratelimit.UnavailableCode || !strings.Contains(string(we.Data), `"hint"`) {
			t.Fatalf("confirmed write during the outage: %v", err)
		}
	}
	if n := strings.Count(rs.log.String(), "shared store unreachable"); n != 1 {
		t.Fatalf("the outage was logged %d times, want once:\n%s", n, rs.log)
	}
	if r := lastRecord(rs.audit); r.Outcome != audit.Refused || r.ErrorCode != string(kernel.StoreUnavailable) || r.ArgsDigest != "" {
		t.Fatalf("audit of a refusal during the outage: %+v", r)
	}

	rs.store.down.Store(false)
	if res := sess.Call(t, "delete_item", with(del, "confirmToken", tok)); res.IsError {
		t.Fatalf("after the outage the token no longer confirms: %s", mcptest.Text(res))
	}
	replay := sess.Call(t, "delete_item", with(del, "confirmToken", tok))
	if !strings.Contains(mcptest.Text(replay), "does not confirm this exact call") || len(*rs.deleted) != 1 {
		t.Fatalf("confirmed twice (%d deletions): %s", len(*rs.deleted), mcptest.Text(replay))
	}
	if resp, body := post(t, rs.url, callBody("get_item", read), nil); resp.StatusCode != 200 || strings.Contains(body, "isError") {
		t.Fatalf("service did not resume: %d %s", resp.StatusCode, body)
	}
	if n := strings.Count(rs.log.String(), "shared store answers again"); n != 1 {
		t.Fatalf("the recovery was logged %d times, want once:\n%s", n, rs.log)
	}
}

// TestStoreOutageServeReads: with the operator's choice, read-only tools go
// on under a per-process limit while writes still fail closed.
func TestStoreOutageServeReads(t *testing.T) {
	rs := newRefusalServer(t, 2, kernel.StoreOutage{ServeReads: true, Setting: "--store-outage"})
	sess := mcptest.Connect(t, rs.srv, nil)
	rs.store.down.Store(true)
	read := map[string]any{"zone": "z", "name": "n"}
	for i := range 2 {
		if res := sess.Call(t, "get_item", read); res.IsError {
			t.Fatalf("read %d refused: %s", i, mcptest.Text(res))
		}
	}
	_, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_item", Arguments: read})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != ratelimit.RefusalCode {
		t.Fatalf("the per-process limit did not hold: %v", err)
	}
	_, err = sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_item", Arguments: map[string]any{"zone": "z", "name": "www"}})
	if !errors.As(err, &we) || we.Code != ratelimit.UnavailableCode {
		t.Fatalf("a write during the outage: %v", err)
	}
	if len(*rs.deleted) != 0 {
		t.Fatal("a write ran during the outage")
	}
}

// TestConfirmStoreOutageWithoutLimiter: with no rate limit, reads go on and a
// gated call says the store is unreachable (not "internal").
func TestConfirmStoreOutageWithoutLimiter(t *testing.T) {
	st := newSwitchStore()
	var deleted []string
	srv, err := kernel.New(kernel.Info{Name: "t"}, testTools(&deleted), &kernel.Options{Confirm: confirm.NewIssuer(st, nil)})
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, srv, nil)
	st.down.Store(true)
	if res := sess.Call(t, "get_item", map[string]any{"zone": "z", "name": "n"}); res.IsError {
		t.Fatalf("read refused: %s", mcptest.Text(res))
	}
	res := sess.Call(t, "delete_item", map[string]any{"zone": "z", "name": "www"})
	if !res.IsError || !strings.Contains(mcptest.Text(res), "Error (store_unavailable)") || strings.Contains(mcptest.Text(res), "127.0.0.1") || len(deleted) != 0 {
		t.Fatalf("gated call during the outage: %s", mcptest.Text(res))
	}
}

func lastRecord(c chan audit.Record) audit.Record {
	var r audit.Record
	for {
		select {
		case r = <-c:
		default:
			return r
		}
	}
}

// TestReplicasEachLogTheirOutageOnce holds the outage row of the inventory
// (docs/operations.md): the once-per-outage line is per process, so each
// replica that meets the outage logs it once, however many calls each
// refuses.
func TestReplicasEachLogTheirOutageOnce(t *testing.T) {
	replicas := []*refusalServer{newRefusalServer(t, 1000, kernel.StoreOutage{}), newRefusalServer(t, 1000, kernel.StoreOutage{})}
	read := map[string]any{"zone": "z", "name": "n"}
	for _, rs := range replicas {
		rs.store.down.Store(true)
	}
	for range 4 {
		for i, rs := range replicas {
			if resp, body := post(t, rs.url, callBody("get_item", read), nil); resp.StatusCode != 503 || !strings.Contains(body, `"store_unavailable"`) {
				t.Fatalf("replica %d during the outage: %d %s", i, resp.StatusCode, body)
			}
		}
	}
	for i, rs := range replicas {
		if n := strings.Count(rs.log.String(), "shared store unreachable"); n != 1 {
			t.Fatalf("replica %d logged the outage %d times, want once:\n%s", i, n, rs.log)
		}
	}
}
