package kernel_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
)

// mrtrFixture serves a gated delete tool and a tool that asks, over
// Streamable HTTP (alice and bob are two principals) and in process.
type mrtrFixture struct {
	srv   *kernel.Server
	url   string
	mu    sync.Mutex
	gone  []string
	audit []audit.Record
	now   time.Time
}

func (f *mrtrFixture) deleted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.gone...)
}

func (f *mrtrFixture) records() []audit.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]audit.Record(nil), f.audit...)
}

func (f *mrtrFixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *mrtrFixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func mrtrTools(f *mrtrFixture) []kernel.Tool {
	return []kernel.Tool{
		kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
			Name: "delete_item", Description: "Delete an item.", Policy: writePolicy(kernel.Always(kernel.Bind{Target: []string{"zone", "name"}})),
			Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
				f.mu.Lock()
				f.gone = append(f.gone, in.Name)
				f.mu.Unlock()
				return map[string]string{"deleted": in.Name}, nil
			},
			Preview: func(ctx context.Context, c *kernel.Call, in itemArgs) (kernel.Preview, error) {
				return kernel.Preview{Summary: "It currently holds 2 record(s), TTL 300."}, nil
			},
			Action: func(in itemArgs) string { return fmt.Sprintf("delete item %q of zone %q", in.Name, in.Zone) },
		}),
		kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
			Name: "ask_name", Description: "Asks for a name, then greets.", Policy: readPolicy,
			Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
				ans, ok := c.Elicited("who")
				if !ok || ans.Action != "accept" {
					return nil, kernel.AskInput(mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "Your name?",
						RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}},
						[]byte("round-1:"+in.Name))
				}
				return map[string]string{"hello": fmt.Sprint(ans.Content["name"]), "state": string(c.State())}, nil
			},
		}).AsksInput(),
	}
}

func newMRTRFixture(t testing.TB, opts kernel.Options) *mrtrFixture {
	t.Helper()
	f := &mrtrFixture{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	opts.Now = f.clock
	if opts.Confirm == nil {
		opts.Confirm = confirm.NewIssuer(nil, &confirm.Options{Now: f.clock})
	}
	opts.Audit = audit.Func(func(_ context.Context, r audit.Record) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.audit = append(f.audit, r)
	})
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, mrtrTools(f), &opts)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(apiKey) + " pro alice\n" + identity.HashKey(freeKey) + " free bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.url = mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{Auth: keys})
	return f
}

// rpcAnswer is a JSON-RPC response as the wire has it.
type rpcAnswer struct {
	Result struct {
		ResultType        string                     `json:"resultType"`
		InputRequests     map[string]json.RawMessage `json:"inputRequests"`
		RequestState      string                     `json:"requestState"`
		IsError           bool                       `json:"isError"`
		Content           []map[string]any           `json:"content"`
		StructuredContent map[string]any             `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call2026 posts a 2026-07-28 tools/call as key's principal, declaring
// caps, with the retry's inputResponses and requestState when given.
func (f *mrtrFixture) call2026(t *testing.T, key, tool string, args, caps map[string]any, responses map[string]any, state string) rpcAnswer {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "_meta": meta2026(caps, nil)}
	if responses != nil {
		params["inputResponses"] = responses
	}
	if state != "" {
		params["requestState"] = state
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
	_, body := post(t, f.url, string(b), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
		"Mcp-Name": tool, "Authorization": "Bearer " + key})
	var a rpcAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return a
}

var (
	elicitCaps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	item       = map[string]any{"zone": "example.com", "name": "www"}
	accept     = map[string]any{"bulwark_confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
)

// ask is the first round: the gate asks the person and returns the state.
func (f *mrtrFixture) ask(t *testing.T, key string, args map[string]any) string {
	t.Helper()
	a := f.call2026(t, key, "delete_item", args, elicitCaps, nil, "")
	if a.Error != nil || a.Result.ResultType != "input_required" || a.Result.RequestState == "" {
		t.Fatalf("first round: %+v", a)
	}
	var q struct {
		Method string `json:"method"`
		Params struct {
			Mode            string         `json:"mode"`
			Message         string         `json:"message"`
			RequestedSchema map[string]any `json:"requestedSchema"`
		} `json:"params"`
	}
	if err := json.Unmarshal(a.Result.InputRequests["bulwark_confirm"], &q); err != nil || q.Method != "elicitation/create" || q.Params.Mode != "form" {
		t.Fatalf("question: %v %+v", err, q)
	}
	for _, want := range []string{`delete item "www" of zone "example.com"`, "holds 2 record(s)", "cannot be undone", "declining changes nothing"} {
		if !strings.Contains(q.Params.Message, want) {
			t.Fatalf("the question lacks %q: %s", want, q.Params.Message)
		}
	}
	if len(a.Result.Content) != 0 || strings.Contains(string(a.Result.InputRequests["bulwark_confirm"]), "confirmToken") {
		t.Fatalf("the question carries content or a token: %+v", a.Result)
	}
	return a.Result.RequestState
}

// TestConsentByElicitationHTTP: a 2026-07-28 client that declares
// elicitation is asked (no token reaches the model); accept runs the call
// once; the audit says which path confirmed it.
func TestConsentByElicitationHTTP(t *testing.T) {
	f := newMRTRFixture(t, kernel.Options{})
	state := f.ask(t, apiKey, item)
	if len(f.deleted()) != 0 {
		t.Fatal("acted before the person answered")
	}
	a := f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state)
	if a.Error != nil || a.Result.IsError || a.Result.ResultType != "complete" || len(f.deleted()) != 1 {
		t.Fatalf("accepted call: %+v, deleted %v", a, f.deleted())
	}
	recs := f.records()
	if got := []audit.Confirm{recs[0].Confirm, recs[1].Confirm}; got[0] != audit.ConfirmAsked || got[1] != audit.ConfirmElicited || recs[1].Outcome != audit.OK {
		t.Fatalf("audit: %+v", recs)
	}
}

// TestConsentDeclined: decline, cancel and an unticked box leave the
// target untouched, and say so.
func TestConsentDeclined(t *testing.T) {
	f := newMRTRFixture(t, kernel.Options{})
	for _, ans := range []map[string]any{
		{"action": "decline"},
		{"action": "cancel"},
		{"action": "accept", "content": map[string]any{"confirm": false}},
		{"action": "accept", "content": map[string]any{"confirm": "true"}},
	} {
		state := f.ask(t, apiKey, item)
		a := f.call2026(t, apiKey, "delete_item", item, elicitCaps, map[string]any{"bulwark_confirm": ans}, state)
		if a.Error != nil || !a.Result.IsError || !strings.Contains(fmt.Sprint(a.Result.StructuredContent), "confirmation_declined") {
			t.Fatalf("%v: %+v", ans, a)
		}
	}
	if len(f.deleted()) != 0 {
		t.Fatalf("a declined call ran: %v", f.deleted())
	}
	if r := f.records(); r[len(r)-1].Confirm != audit.ConfirmDeclined {
		t.Fatalf("audit: %+v", r[len(r)-1])
	}
}

// TestRequestStateRefusals: each way of misusing a requestState is refused
// with -32602 through the protocol, before the handler runs, and the
// target stays untouched. Each case would run the call without its check.
func TestRequestStateRefusals(t *testing.T) {
	f := newMRTRFixture(t, kernel.Options{})
	other := map[string]any{"zone": "example.com", "name": "mail"}
	cases := []struct {
		name string
		run  func(state string) rpcAnswer
	}{
		{"tampered", func(s string) rpcAnswer {
			b := []byte(s)
			b[len(b)/2] ^= 1
			if b[len(b)/2] == '-' || b[len(b)/2] == '_' { // keep it base64url
				b[len(b)/2] = 'A'
			}
			return f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, string(b))
		}},
		{"suffixed", func(s string) rpcAnswer {
			return f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, s+"-TAMPERED")
		}},
		{"replayed", func(s string) rpcAnswer {
			if a := f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, s); a.Error != nil || a.Result.IsError {
				t.Fatalf("first use: %+v", a)
			}
			return f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, s)
		}},
		{"expired", func(s string) rpcAnswer {
			f.advance(confirm.DefaultTTL + time.Second)
			return f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, s)
		}},
		{"other principal", func(s string) rpcAnswer {
			return f.call2026(t, freeKey, "delete_item", item, elicitCaps, accept, s)
		}},
		{"other arguments", func(s string) rpcAnswer {
			return f.call2026(t, apiKey, "delete_item", other, elicitCaps, accept, s)
		}},
		{"other tool", func(s string) rpcAnswer {
			return f.call2026(t, apiKey, "ask_name", item, elicitCaps, map[string]any{"who": map[string]any{"action": "accept", "content": map[string]any{"name": "x"}}}, s)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.deleted())
			a := c.run(f.ask(t, apiKey, item))
			if a.Error == nil || a.Error.Code != -32602 {
				t.Fatalf("not refused: %+v", a)
			}
			want := before
			if c.name == "replayed" {
				want++ // the first, genuine use
			}
			if got := len(f.deleted()); got != want {
				t.Fatalf("deleted %d, want %d", got, want)
			}
			if r := f.records(); r[len(r)-1].ErrorCode != string(kernel.CodeInvalidRequestState) {
				t.Fatalf("audit: %+v", r[len(r)-1])
			}
		})
	}
}

// TestConsentMissingAnswerAsksAgain: a retry without the answer is asked
// again with a fresh state, and the spent one stays spent.
func TestConsentMissingAnswerAsksAgain(t *testing.T) {
	f := newMRTRFixture(t, kernel.Options{})
	state := f.ask(t, apiKey, item)
	a := f.call2026(t, apiKey, "delete_item", item, elicitCaps, map[string]any{"wrong_key": map[string]any{"action": "accept"}}, state)
	if a.Error != nil || a.Result.ResultType != "input_required" || a.Result.RequestState == state {
		t.Fatalf("not asked again: %+v", a)
	}
	if b := f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state); b.Error == nil {
		t.Fatal("the spent state confirmed a call")
	}
	if b := f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, a.Result.RequestState); b.Error != nil || b.Result.IsError || len(f.deleted()) != 1 {
		t.Fatalf("fresh state: %+v", b)
	}
}

// TestConfirmPaths: without elicitation the token flow holds (auto); token
// mode never asks; elicit mode refuses a client that cannot be asked and
// never issues a token.
func TestConfirmPaths(t *testing.T) {
	auto := newMRTRFixture(t, kernel.Options{})
	if a := auto.call2026(t, apiKey, "delete_item", item, map[string]any{}, nil, ""); a.Result.ResultType == "input_required" || a.Result.StructuredContent["confirmToken"] == nil {
		t.Fatalf("auto without elicitation: %+v", a)
	}
	tok := newMRTRFixture(t, kernel.Options{ConfirmBy: kernel.ConfirmToken})
	if a := tok.call2026(t, apiKey, "delete_item", item, elicitCaps, nil, ""); a.Result.ResultType == "input_required" || a.Result.StructuredContent["confirmToken"] == nil {
		t.Fatalf("token mode: %+v", a)
	}
	el := newMRTRFixture(t, kernel.Options{ConfirmBy: kernel.ConfirmElicit})
	a := el.call2026(t, apiKey, "delete_item", item, map[string]any{}, nil, "")
	if !a.Result.IsError || a.Result.StructuredContent["confirmToken"] != nil || !strings.Contains(fmt.Sprint(a.Result.StructuredContent), "failed_precondition") {
		t.Fatalf("elicit mode without elicitation: %+v", a)
	}
	el.ask(t, apiKey, item)
	list, err := mcptest.Connect(t, el.srv, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if strings.Contains(fmt.Sprint(tool.InputSchema), "confirmToken") {
			t.Fatalf("%s offers confirmToken under elicit mode", tool.Name)
		}
	}
	if a := el.call2026(t, apiKey, "delete_item", with(item, "confirmToken", "x"), elicitCaps, nil, ""); !a.Result.IsError || a.Result.ResultType == "input_required" {
		t.Fatalf("a confirmToken under elicit mode: %+v", a)
	}
	if _, err := kernel.New(kernel.Info{Name: "t"}, nil, &kernel.Options{ConfirmBy: "person"}); err == nil {
		t.Fatal("an unknown confirmation path was accepted")
	}
}

// TestAskInputRoundTrip: a handler's question and state come back to it on
// the retry, verified; a tool that asks undeclared capabilities is refused.
func TestAskInputRoundTrip(t *testing.T) {
	f := newMRTRFixture(t, kernel.Options{})
	a := f.call2026(t, apiKey, "ask_name", item, elicitCaps, nil, "")
	if a.Result.ResultType != "input_required" || a.Result.InputRequests["who"] == nil {
		t.Fatalf("first round: %+v", a)
	}
	b := f.call2026(t, apiKey, "ask_name", item, elicitCaps, map[string]any{"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}, a.Result.RequestState)
	if b.Error != nil || b.Result.StructuredContent["hello"] != "Alice" || b.Result.StructuredContent["state"] != "round-1:www" {
		t.Fatalf("second round: %+v", b)
	}
	c := f.call2026(t, apiKey, "ask_name", item, map[string]any{"sampling": map[string]any{}}, nil, "")
	if !c.Result.IsError || c.Result.InputRequests != nil {
		t.Fatalf("asked a client that did not declare elicitation: %+v", c)
	}
}

// TestConsentOverSession: a session client (stdio) is asked; on
// 2025-11-25 with a real elicitation/create request from the server, on
// 2026-07-28 through input_required, which the go-sdk client answers with
// its elicitation handler. Accept runs the call, decline leaves the target
// untouched.
func TestConsentOverSession(t *testing.T) {
	for _, c := range []struct{ version, action string }{{"2025-11-25", "accept"}, {"2025-11-25", "decline"}, {"", "accept"}, {"", "decline"}} {
		action := c.action
		t.Run(c.version+action, func(t *testing.T) {
			f := newMRTRFixture(t, kernel.Options{})
			var asked []string
			sess := mcptest.Connect(t, f.srv, &mcptest.Options{Client: &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, r.Params.Message)
					return &mcp.ElicitResult{Action: action, Content: map[string]any{"confirm": action == "accept"}}, nil
				},
			}, ProtocolVersion: c.version})
			res := sess.Call(t, "delete_item", item)
			wire := sess.Transcript()
			if modern := strings.Contains(wire, `"resultType": "input_required"`); modern != (c.version == "") {
				t.Fatalf("input_required %v on %q:\n%s", modern, c.version, wire)
			}
			if len(asked) != 1 || !strings.Contains(asked[0], `delete item "www"`) {
				t.Fatalf("asked %q", asked)
			}
			want := 0
			if action == "accept" {
				want = 1
			}
			if len(f.deleted()) != want || res.IsError == (action == "accept") {
				t.Fatalf("%s: deleted %v, result %s", action, f.deleted(), mcptest.Text(res))
			}
			if c.version != "" { // one tools/call, one audit record (on 2026-07-28 the retry is a second call)
				f.mu.Lock()
				recs := slices.Clone(f.audit)
				f.mu.Unlock()
				if len(recs) != 1 || recs[0].Tool != "delete_item" {
					t.Fatalf("%d audit records for one tools/call: %+v", len(recs), recs)
				}
				if want := map[string]audit.Confirm{"accept": audit.ConfirmElicited, "decline": audit.ConfirmDeclined}[action]; recs[0].Confirm != want {
					t.Fatalf("the record's confirm is %q, want %q", recs[0].Confirm, want)
				}
			}
		})
	}
}

// TestRequestStateBudget: an oversized or garbage requestState is refused
// before any decoding or store work (the sealer checks its length first).
func TestRequestStateBudget(t *testing.T) {
	f := newMRTRFixture(t, kernel.Options{})
	for _, s := range []string{strings.Repeat("A", 64<<10), "%%%", "AQ"} {
		if a := f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, s); a.Error == nil || a.Error.Code != -32602 {
			t.Fatalf("%.10q…: %+v", s, a)
		}
	}
	if len(f.deleted()) != 0 {
		t.Fatal("a garbage state ran the call")
	}
}

// TestAskWithoutDeclaring: a handler that asks without AsksInput fails
// with an internal error instead of an answer only one path can mark.
func TestAskWithoutDeclaring(t *testing.T) {
	tool := kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "sneaky", Description: "Asks undeclared.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			return nil, kernel.AskInput(mcp.InputRequestMap{"x": &mcp.ElicitParams{Message: "?"}}, nil)
		},
	})
	srv, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := mcptest.Connect(t, srv, nil).Call(t, "sneaky", item)
	if !res.IsError || res.InputRequests != nil || !strings.Contains(mcptest.Text(res), "internal") {
		t.Fatalf("%+v", res)
	}
}

// TestRequestStateSingleUseAcrossReplicas: two replicas sharing the
// confirmation store and the sealing key: a state asked on one is accepted
// once on the other, and refused after that on either. A replica with
// another key refuses it.
func TestRequestStateSingleUseAcrossReplicas(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	sealer, err := seal.New(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := confirm.NewMemoryStore()
	replica := func(s *seal.Sealer) *mrtrFixture {
		return newMRTRFixture(t, kernel.Options{Confirm: confirm.NewIssuer(store, nil), Sealer: s})
	}
	a, b, stranger := replica(sealer), replica(sealer), replica(nil)
	state := a.ask(t, apiKey, item)
	if r := stranger.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state); r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("a replica with another key: %+v", r)
	}
	if r := b.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state); r.Error != nil || r.Result.IsError || len(b.deleted()) != 1 {
		t.Fatalf("the other replica: %+v", r)
	}
	for _, f := range []*mrtrFixture{a, b} {
		if r := f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state); r.Error == nil || r.Error.Code != -32602 {
			t.Fatalf("replayed: %+v", r)
		}
	}
	if len(a.deleted())+len(b.deleted()) != 1 {
		t.Fatal("the call ran more than once")
	}
}

// TestTokenDoesNotReplaceThePerson: when the client declares elicitation,
// a confirmToken the model got elsewhere (the same principal, a client
// without elicitation) is not taken: the person is asked, and nothing
// runs; under -confirm elicit no token is ever issued.
func TestTokenDoesNotReplaceThePerson(t *testing.T) {
	f := newMRTRFixture(t, kernel.Options{})
	tok, _ := f.call2026(t, apiKey, "delete_item", item, map[string]any{}, nil, "").Result.StructuredContent["confirmToken"].(string)
	if tok == "" {
		t.Fatal("no token for a client without elicitation")
	}
	a := f.call2026(t, apiKey, "delete_item", map[string]any{"zone": "example.com", "name": "www", "confirmToken": tok}, elicitCaps, nil, "")
	if a.Result.ResultType != "input_required" || len(f.deleted()) != 0 {
		t.Fatalf("a token stood in for the person: %+v, deleted %v", a, f.deleted())
	}
}

// TestQuestionWithCredentialIsWithheld: a handler whose question to the
// client holds a configured credential (here base64-encoded, as in an
// echoed Basic header) gets no question sent, on either protocol version:
// the call fails with upstream_error and the client is never asked.
func TestQuestionWithCredentialIsWithheld(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	tool := kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "ask_leaky", Description: "Asks a question that echoes the credential.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			if _, ok := c.Elicited("q"); ok {
				return map[string]string{"ok": "asked"}, nil
			}
			msg := "Confirm Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+secret))
			return nil, kernel.AskInput(mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: msg,
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}}, nil)
		},
	}).AsksInput()
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool}, &kernel.Options{
		Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Value: secret}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", ""} {
		asked := 0
		sess := mcptest.Connect(t, srv, &mcptest.Options{ProtocolVersion: version, Client: &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked++
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
			},
		}})
		res := sess.Call(t, "ask_leaky", item)
		if !res.IsError || asked != 0 || !strings.Contains(mcptest.Text(res), "upstream_error") {
			t.Fatalf("%q: asked %d times, result %s", version, asked, mcptest.Text(res))
		}
		if strings.Contains(sess.Transcript(), base64.StdEncoding.EncodeToString([]byte("u:" + secret))[4:20]) {
			t.Fatalf("%q: the credential reached the wire", version)
		}
	}
}
