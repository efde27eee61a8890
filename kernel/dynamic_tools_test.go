package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

func runtimeTool(name, answer string, readOnly bool) kernel.Tool {
	ro, destructive := kernel.Yes, kernel.No
	if !readOnly {
		ro = kernel.No
	}
	return kernel.NewDynamicTool(kernel.DynamicSpec{
		Name: name, Description: "A tool known at run time.",
		Policy: kernel.Policy{ReadOnly: ro, Destructive: destructive, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: kernel.Open},
		Schema: &jsonschema.Schema{Type: "object"},
		Handle: func(context.Context, *kernel.Call, json.RawMessage) (any, error) { return kernel.Text(answer), nil },
	})
}

func runtimeNames(t *testing.T, s *mcptest.Session) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// Tools added and withdrawn after New are listed (or not) and called (or
// refused with the embedder's reason), and every session is told.
func TestDynamicToolsAddAndWithdraw(t *testing.T) {
	ks, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{runtimeTool("a", "A1", true)}, &kernel.Options{DynamicTools: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	changed := make(chan struct{}, 8)
	sess := mcptest.Connect(t, ks, &mcptest.Options{Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			mu.Lock()
			defer mu.Unlock()
			changed <- struct{}{}
		},
	}})
	if caps := sess.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("tools capability %+v: want listChanged", caps.Tools)
	}
	skipped, err := ks.AddTools(runtimeTool("b", "B1", true), runtimeTool("w", "W", false), runtimeTool("a", "A2", true))
	if err != nil || len(skipped) != 1 || skipped[0] != "w" {
		t.Fatalf("AddTools: skipped %v, %v (want the write tool skipped in read-only mode)", skipped, err)
	}
	waitChanged(t, changed)
	if got := strings.Join(runtimeNames(t, sess), ","); got != "a,b" {
		t.Fatalf("list %q, want a,b", got)
	}
	if got := mcptest.Text(sess.Call(t, "a", map[string]any{})); !strings.Contains(got, "A2") {
		t.Fatalf("a was not replaced: %s", got)
	}
	why := kernel.Errorf(kernel.FailedPrecondition, "The upstream changed b.").WithHint("Approve it.")
	if err := ks.WithdrawTool("b", why); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, changed)
	if got := strings.Join(runtimeNames(t, sess), ","); got != "a" {
		t.Fatalf("list %q after withdrawal, want a", got)
	}
	res := sess.Call(t, "b", map[string]any{})
	if !res.IsError || !strings.Contains(mcptest.Text(res), "failed_precondition") || !strings.Contains(mcptest.Text(res), "The upstream changed b.") {
		t.Fatalf("call of a withdrawn tool: %s", mcptest.Text(res))
	}
	if _, err := ks.AddTools(runtimeTool("b", "B2", true)); err != nil {
		t.Fatal(err)
	}
	if got := mcptest.Text(sess.Call(t, "b", map[string]any{})); !strings.Contains(got, "B2") {
		t.Fatalf("b back: %s", got)
	}
	if toolNamed(ks, "b").Name() != "b" || len(ks.Tools()) != 2 {
		t.Fatalf("Tools(): %d", len(ks.Tools()))
	}
}

func waitChanged(t *testing.T, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}

// A server built without DynamicTools keeps its set: AddTools and the
// withdrawal of a registered tool are refused; a name never registered may
// be withdrawn (its calls get the reason instead of "unknown tool").
func TestStaticToolsRefuseChanges(t *testing.T) {
	ks, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{runtimeTool("a", "A", true)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.AddTools(runtimeTool("b", "B", true)); !errors.Is(err, kernel.ErrStaticTools) {
		t.Fatalf("AddTools: %v", err)
	}
	if err := ks.WithdrawTool("a", kernel.Errorf(kernel.FailedPrecondition, "x")); !errors.Is(err, kernel.ErrStaticTools) {
		t.Fatalf("WithdrawTool: %v", err)
	}
	if err := ks.WithdrawTool("gone", kernel.Errorf(kernel.FailedPrecondition, "gone changed")); err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, ks, nil)
	if res := sess.Call(t, "gone", map[string]any{}); !res.IsError || !strings.Contains(mcptest.Text(res), "gone changed") {
		t.Fatalf("withdrawn unknown name: %s", mcptest.Text(res))
	}
	if caps := sess.InitializeResult().Capabilities; caps.Tools.ListChanged {
		t.Fatal("a fixed tool set declares listChanged")
	}
}

// Over HTTP, a dynamic server's list follows its changes (the fast path,
// which answers from the set of New, is off).
func TestDynamicToolsOverHTTP(t *testing.T) {
	ks, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{runtimeTool("a", "A", true)}, &kernel.Options{DynamicTools: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ks.HTTPHandler(kernel.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if _, err := ks.AddTools(runtimeTool("b", "B", true)); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + kernel.MCPPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 2 {
		t.Fatalf("list over HTTP: %v %+v", err, res)
	}
}

// Under an authorization policy, whose Cedar schema is generated from the
// tools of New, only those can be added back; a new name is refused.
func TestDynamicToolsUnderAuthzOnlyTheToolsOfNew(t *testing.T) {
	pf := filepath.Join(t.TempDir(), "policy.cedar")
	if err := os.WriteFile(pf, []byte("permit(principal, action, resource);"), 0o600); err != nil {
		t.Fatal(err)
	}
	ks, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{runtimeTool("a", "A", true)},
		&kernel.Options{DynamicTools: true, Authz: &authz.Config{PolicyFile: pf}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.AddTools(runtimeTool("b", "B", true)); err == nil || !strings.Contains(err.Error(), "authorization policy") {
		t.Fatalf("a new tool under authz: %v", err)
	}
	if err := ks.WithdrawTool("a", kernel.Errorf(kernel.FailedPrecondition, "changed")); err != nil {
		t.Fatal(err)
	}
	if _, err := ks.AddTools(runtimeTool("a", "A2", true)); err != nil {
		t.Fatalf("a tool of New, added back: %v", err)
	}
	sess := mcptest.Connect(t, ks, nil)
	if got := mcptest.Text(sess.Call(t, "a", map[string]any{})); !strings.Contains(got, "A2") {
		t.Fatalf("a: %s", got)
	}
}
