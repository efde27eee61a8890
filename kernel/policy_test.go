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
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

func TestPolicyMustBeComplete(t *testing.T) {
	full := writePolicy(kernel.Never)
	cases := map[string]func(p *kernel.Policy){
		"ReadOnly unset":    func(p *kernel.Policy) { p.ReadOnly = 0 },
		"Destructive unset": func(p *kernel.Policy) { p.Destructive = 0 },
		"Idempotent unset":  func(p *kernel.Policy) { p.Idempotent = 0 },
		"OpenWorld unset":   func(p *kernel.Policy) { p.OpenWorld = 0 },
		"Confirm unset":     func(p *kernel.Policy) { p.Confirm = kernel.Gate{} },
		"Tier unset":        func(p *kernel.Policy) { p.Tier = "" },
		"read-only and gated": func(p *kernel.Policy) {
			p.ReadOnly = kernel.Yes
			p.Destructive = kernel.No
			p.Confirm = kernel.Always(kernel.Bind{Target: []string{"zone"}})
		},
		"read-only destructive": func(p *kernel.Policy) {
			p.ReadOnly = kernel.Yes
		},
		"gate binds nothing":   func(p *kernel.Policy) { p.Confirm = kernel.Always(kernel.Bind{}) },
		"When without pred":    func(p *kernel.Policy) { p.Confirm = kernel.When(nil, kernel.Bind{Target: []string{"zone"}}) },
		"binds a non-argument": func(p *kernel.Policy) { p.Confirm = kernel.Always(kernel.Bind{Target: []string{"nope"}}) },
		"unknown tier":         func(p *kernel.Policy) { p.Tier = "platinum" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			p := full
			mutate(&p)
			tool := kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{Name: "t", Description: "d", Policy: p,
				Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) { return nil, nil }})
			if _, err := kernel.New(kernel.Info{Name: "x"}, []kernel.Tool{tool}, nil); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func listNames(t *testing.T, s *mcptest.Session) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Annotations == nil || tool.Annotations.DestructiveHint == nil || tool.Annotations.OpenWorldHint == nil {
			t.Errorf("%s: annotations not all stated", tool.Name)
		}
	}
	return names
}

func TestReadOnlyModeRegistersNoWriteTool(t *testing.T) {
	f := newFixture(t, kernel.Options{ReadOnly: true})
	names := listNames(t, f.sess)
	for _, n := range names {
		if tool := toolNamed(f.srv, n); tool.Policy().ReadOnly != kernel.Yes {
			t.Errorf("write tool %s listed in read-only mode", n)
		}
	}
	if len(names) != 5 {
		t.Errorf("listed %v", names)
	}
	_, err := f.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_item", Arguments: map[string]any{"zone": "z", "name": "n"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "unknown tool") {
		t.Fatalf("calling a write tool in read-only mode: %v", err)
	}
}

func TestAllowAndDenyLists(t *testing.T) {
	f := newFixture(t, kernel.Options{Allow: []string{"get_*", "list_items", "delete_item"}, Deny: []string{"GET_ITEM"}})
	got := strings.Join(listNames(t, f.sess), ",")
	if got != "delete_item,list_items" {
		t.Fatalf("tools %s", got)
	}
	for _, opts := range []kernel.Options{
		{Allow: []string{"no_such_tool"}},
		{Deny: []string{"zzz*"}},
		{ReadOnly: true, Allow: []string{"delete_item"}},
	} {
		if _, err := kernel.New(kernel.Info{Name: "x"}, testTools(new([]string)), &opts); err == nil {
			t.Errorf("accepted %+v", opts)
		}
	}
}

func TestValidationErrorIsAToolError(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	cases := []struct {
		args any
		want string
	}{
		{map[string]any{"zone": "z"}, `missing properties: ["name"]`},
		{map[string]any{"zone": "z", "name": 5}, `argument "name"`},
		{map[string]any{"zone": "z", "name": "n", "admin": true}, `unexpected additional properties ["admin"]`},
	}
	for _, c := range cases {
		res := f.sess.Call(t, "get_item", c.args)
		text := mcptest.Text(res)
		if !res.IsError || !strings.Contains(text, "invalid_argument") || !strings.Contains(text, c.want) {
			t.Errorf("%v: %s", c.args, text)
		}
		if strings.Contains(text, "/properties/") || strings.Contains(text, "validating") {
			t.Errorf("schema internals leak: %s", text)
		}
	}
}

func TestInternalErrorIsSanitized(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	res := f.sess.Call(t, "broken", map[string]any{"zone": "z", "name": "n"})
	text := mcptest.Text(res)
	if !res.IsError || !strings.Contains(text, "Error (internal)") {
		t.Fatalf("%s", text)
	}
	for _, leak := range []string{"10.0.0.1", "abc123", "/etc/secret", "dial tcp"} {
		if strings.Contains(text, leak) {
			t.Errorf("internal detail %q reached the client: %s", leak, text)
		}
	}
	var s struct {
		Error struct{ ID string } `json:"error"`
	}
	mcptest.Structured(t, res, &s)
	if s.Error.ID == "" || !strings.Contains(text, s.Error.ID) || !strings.Contains(f.log.String(), "error_id="+s.Error.ID) {
		t.Fatalf("the error id does not tie the result to the log: %q\n%s", s.Error.ID, f.log.String())
	}
	if r := f.audit[len(f.audit)-1]; r.Outcome != audit.Internal || r.ErrorID != s.Error.ID {
		t.Fatalf("audit %+v", r)
	}
}

func TestAuditNeverHoldsArgumentValues(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	f.sess.Call(t, "get_item", map[string]any{"zone": "secret-zone.example", "name": "private-name"})
	f.sess.Call(t, "get_item", map[string]any{"name": "private-name", "zone": "secret-zone.example"})
	if len(f.audit) != 2 {
		t.Fatalf("%d records", len(f.audit))
	}
	a, b := f.audit[0], f.audit[1]
	if a.Outcome != audit.OK || a.ArgsDigest == "" || a.ArgsDigest != b.ArgsDigest || a.BytesIn == 0 || a.BytesOut == 0 {
		t.Fatalf("records %+v %+v", a, b)
	}
	for _, r := range f.audit {
		if s := strings.ToLower(recordString(r)); strings.Contains(s, "secret-zone") || strings.Contains(s, "private-name") || strings.Contains(s, "hunter2") {
			t.Fatalf("argument or result value in audit: %s", s)
		}
	}
}

func recordString(r audit.Record) string {
	return strings.Join([]string{r.Principal, r.Plan, r.Scheme, r.Network, r.Tool, string(r.Outcome), r.ErrorCode, r.ErrorID, r.ArgsDigest}, "|")
}

func TestTierCheckSpendsNoSlot(t *testing.T) {
	tiers, _ := ratelimit.NewTiers("local", "pro")
	clock := &fakeClock{}
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: 2, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	tools := testTools(new([]string))
	pro := kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{Name: "pro_tool", Description: "d",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: "pro"},
		Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) {
			return map[string]string{}, nil
		}})
	srv, err := kernel.New(kernel.Info{Name: "x"}, append(tools, pro), &kernel.Options{Tiers: tiers, Limiter: lim})
	if err != nil {
		t.Fatal(err)
	}
	s := mcptest.Connect(t, srv, nil)
	args := map[string]any{"zone": "z", "name": "n"}
	for range 5 {
		res := s.Call(t, "pro_tool", args)
		if !res.IsError || !strings.Contains(mcptest.Text(res), "permission_denied") {
			t.Fatalf("tier refusal: %s", mcptest.Text(res))
		}
	}
	for i := range 2 {
		if res := s.Call(t, "get_item", args); res.IsError {
			t.Fatalf("call %d refused after tier refusals: %s", i, mcptest.Text(res))
		}
	}
	_, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_item", Arguments: args})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != -32000 || !strings.HasSuffix(we.Message, "s.") || !strings.Contains(we.Message, "Resets in ") || !strings.Contains(string(we.Data), `"rate_limited"`) {
		t.Fatalf("over the limit: %v", err)
	}
}

// TestPolicyReportsTheFirstUnsetField: with every hint unset, the error
// names ReadOnly on every run (the fields were checked in map order, so the
// field reported changed from run to run).
func TestPolicyReportsTheFirstUnsetField(t *testing.T) {
	p := kernel.Policy{Confirm: kernel.Never, Tier: kernel.Open}
	for range 50 {
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "ReadOnly is not set") {
			t.Fatalf("Validate = %v, want ReadOnly named first", err)
		}
	}
}

// TestGateString: one rendering of a gate, for policy tables and the
// README's Confirmation column alike.
func TestGateString(t *testing.T) {
	bind := kernel.Bind{Target: []string{"zone"}, Payload: []string{"records", "ttl"}}
	for _, tt := range []struct {
		gate kernel.Gate
		want string
	}{
		{kernel.Gate{}, "unset"},
		{kernel.Never, "never"},
		{kernel.Always(kernel.Bind{Target: []string{"zone"}}), "always"},
		{kernel.Always(bind), "always; bound to `records`, `ttl`"},
		{kernel.When(func(map[string]any) bool { return true }, kernel.Bind{Target: []string{"zone"}}), "conditional"},
		{kernel.When(func(map[string]any) bool { return true }, bind).Described("only when removing protection"),
			"only when removing protection; bound to `records`, `ttl`"},
	} {
		if got := tt.gate.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// toolNamed is the registered tool of srv called name, or the zero Tool.
func toolNamed(srv *kernel.Server, name string) kernel.Tool {
	for _, t := range srv.Tools() {
		if t.Name() == name {
			return t
		}
	}
	return kernel.Tool{}
}
