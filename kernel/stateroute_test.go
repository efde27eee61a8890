package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
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
)

// fakeRouter is a StateRouter that sends every answer to one URL, or fails.
type fakeRouter struct {
	mu     sync.Mutex
	to     *url.URL
	err    error
	states []string
}

func (r *fakeRouter) RouteState(_ context.Context, tool string, state []byte) (kernel.Route, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, tool+":"+string(state))
	return kernel.Route{URL: r.to, Timeout: 5 * time.Second}, r.err
}

func (r *fakeRouter) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...)
}

// routeReplica is one replica of a server whose tool asks the client.
type routeReplica struct {
	url     string
	mu      sync.Mutex
	headers []http.Header // of every request it got
	audit   []audit.Record
}

func newRouteReplica(t *testing.T, opts kernel.Options, more ...kernel.Tool) *routeReplica {
	t.Helper()
	r := &routeReplica{}
	ask := kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "ask", Description: "Asks the client a question.", Policy: readPolicy,
		Handle: func(_ context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			if e, ok := c.Elicited("q"); ok {
				return map[string]string{"answer": e.Action, "state": string(c.State())}, nil
			}
			return nil, kernel.AskInput(mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "Which?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}}, []byte("held-by-A"))
		},
	}).AsksInput()
	opts.Audit = audit.Func(func(_ context.Context, rec audit.Record) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.audit = append(r.audit, rec)
	})
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, append([]kernel.Tool{ask}, more...), &opts)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(apiKey) + " pro alice\n" + identity.HashKey(freeKey) + " free bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	h, err := srv.HTTPHandler(kernel.HTTPOptions{Addr: ts.Listener.Addr().String(), Auth: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
	ts.Start()
	t.Cleanup(ts.Close)
	r.url = ts.URL + kernel.MCPPath
	return r
}

func (r *routeReplica) got() ([]http.Header, []audit.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...), append([]audit.Record(nil), r.audit...)
}

// askCall posts the tool's call (an answer when state is set) as key.
func askCall(t *testing.T, endpoint, key, state string, header map[string]string) (int, rpcAnswer, string) {
	t.Helper()
	params := map[string]any{"name": "ask", "arguments": item, "_meta": meta2026(elicitCaps, nil)}
	if state != "" {
		params["inputResponses"] = map[string]any{"q": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
		params["requestState"] = state
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ask", "Authorization": "Bearer " + key}
	for k, v := range header {
		h[k] = v
	}
	resp, body := post(t, endpoint, string(b), h)
	var a rpcAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return resp.StatusCode, a, body
}

// TestStateRouterForwardsTheClientsRequest: a replica with a StateRouter
// asks it only about an answer whose requestState opens for the caller and
// the tool, and then sends the client's own request — its credentials
// included, though authentication removed them from what the tool layer
// sees, its cookies not, marked Bulwark-Forwarded — to the route; the
// replica there runs and spends it, and its answer reaches the client. The
// forwarding replica writes one "forwarded" record and runs nothing. A
// marked request, another principal's answer and a garbage state are never
// routed; a router that fails refuses the answer with 503
// store_unavailable, and nothing is spent.
func TestStateRouterForwardsTheClientsRequest(t *testing.T) {
	sealer, issuer := replicaSealer(t), confirm.NewIssuer(nil, nil)
	a := newRouteReplica(t, kernel.Options{Sealer: sealer, Confirm: issuer})
	router := &fakeRouter{}
	b := newRouteReplica(t, kernel.Options{Sealer: sealer, Confirm: issuer, StateRouter: router})
	router.to, _ = url.Parse(a.url)

	_, first, body := askCall(t, a.url, apiKey, "", nil)
	state := first.Result.RequestState
	if first.Result.ResultType != "input_required" || state == "" {
		t.Fatalf("the question: %s", body)
	}
	for _, c := range []struct {
		key, state string
		header     map[string]string
	}{
		{freeKey, state, nil},        // another principal's answer
		{apiKey, "not-a-state", nil}, // garbage
	} {
		if _, got, body := askCall(t, b.url, c.key, c.state, c.header); got.Error == nil || got.Error.Code != -32602 {
			t.Fatalf("%+v on B: %s", c, body)
		}
	}
	if asked := router.asked(); len(asked) != 0 {
		t.Fatalf("the router was asked about %v", asked)
	}

	_, first, _ = askCall(t, a.url, apiKey, "", nil)
	state = first.Result.RequestState
	router.err = errors.New("store down")
	code, got, body := askCall(t, b.url, apiKey, state, nil)
	if code != http.StatusServiceUnavailable || got.Error == nil || !strings.Contains(body, "store_unavailable") {
		t.Fatalf("the answer with the router failing: %d %s", code, body)
	}
	router.err = nil
	headersBefore, _ := a.got()
	code, got, body = askCall(t, b.url, apiKey, state, map[string]string{"Cookie": "session=secret-cookie"})
	if code != http.StatusOK || got.Error != nil || got.Result.IsError || !strings.Contains(body, "accept") || !strings.Contains(body, "held-by-A") {
		t.Fatalf("the forwarded answer: %d %s", code, body)
	}
	if asked := router.asked(); len(asked) != 2 || asked[1] != "ask:held-by-A" {
		t.Fatalf("the router was asked about %v", asked)
	}
	headers, recA := a.got()
	if len(headers) != len(headersBefore)+1 {
		t.Fatalf("A got %d requests for one forwarded answer", len(headers)-len(headersBefore))
	}
	fwd := headers[len(headers)-1]
	if fwd.Get("Authorization") != "Bearer "+apiKey || fwd.Get(kernel.ForwardedHeader) != "1" || fwd.Get("Cookie") != "" || fwd.Get("Mcp-Name") != "ask" {
		t.Fatalf("the forwarded request's headers: %v", fwd)
	}
	if last := recA[len(recA)-1]; last.Outcome != audit.OK || last.Principal != "alice" {
		t.Fatalf("A's record of the call: %+v", last)
	}
	_, recB := b.got()
	var forwarded int
	for _, r := range recB {
		if r.Outcome == audit.OK {
			t.Fatalf("B ran a call: %+v", r)
		}
		if r.Outcome == audit.Forwarded {
			forwarded++
		}
	}
	if forwarded != 1 {
		t.Fatalf("B's records: %+v", recB)
	}
	if _, got, body := askCall(t, b.url, apiKey, state, nil); got.Error == nil || got.Error.Code != -32602 {
		t.Fatalf("the forwarded answer replayed: %s", body)
	}

	// Marked by the client: never routed, answered here (this tool holds
	// nothing in its process, so it runs here).
	_, first, _ = askCall(t, a.url, apiKey, "", nil)
	asked := len(router.asked())
	_, got, body = askCall(t, b.url, apiKey, first.Result.RequestState, map[string]string{kernel.ForwardedHeader: "1"})
	if got.Error != nil || got.Result.IsError || len(router.asked()) != asked {
		t.Fatalf("a marked answer on B (router asked %d more times): %s", len(router.asked())-asked, body)
	}
}

// taskRouter is a StateRouter and a TaskRouter that sends every task
// request to one replica.
type taskRouter struct {
	fakeRouter
	tasks []string
}

func (r *taskRouter) RouteTask(_ context.Context, p identity.Principal, id string) (kernel.Route, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tasks = append(r.tasks, p.ID+":"+id)
	return kernel.Route{URL: r.to, Timeout: 5 * time.Second}, r.err
}

func (r *taskRouter) askedTasks() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.tasks...)
}

// reportTool is a task-only tool whose tasks relay records.
func reportTool(t *testing.T, relay *memTasks) kernel.Tool {
	type in struct {
		Topic string `json:"topic"`
	}
	return kernel.NewTool(kernel.Spec[in, any]{
		Name: "report", Description: "Writes a report, as a task.", Policy: readPolicy,
		Handle: func(_ context.Context, c *kernel.Call, in in) (any, error) {
			if _, ok := c.Task(); !ok {
				t.Error("the handler ran for a plain call")
			}
			id := "t-" + in.Topic
			relay.mu.Lock()
			relay.owner[id], relay.out[id] = c.Principal.ID, "report on "+in.Topic
			relay.mu.Unlock()
			return kernel.TaskCreated{Task: relay.task(id, kernel.TaskWorking)}, nil
		},
	}).TaskSupport(kernel.TaskRequired)
}

// TestTaskRouterForwardsTaskRequests: with a StateRouter that is also a
// TaskRouter, B asks it about tasks/get, tasks/result and tasks/cancel of
// a 2025-11-25 client naming a task id — with the caller's principal —
// and forwards the client's own request to the route, where A answers it
// (another principal's request too: A answers it as an unknown id's). It
// never asks about tasks/list, a request without a taskId, another
// protocol version's request, or one marked as forwarded; a router that
// fails refuses the request with 503 store_unavailable, and B's record of
// a forwarded request names the method.
func TestTaskRouterForwardsTaskRequests(t *testing.T) {
	sealer := replicaSealer(t)
	relayA, relayB := &memTasks{owner: map[string]string{}, out: map[string]string{}}, &memTasks{owner: map[string]string{}, out: map[string]string{}}
	a := newRouteReplica(t, kernel.Options{Sealer: sealer, Tasks: relayA}, reportTool(t, relayA))
	router := &taskRouter{}
	b := newRouteReplica(t, kernel.Options{Sealer: sealer, Tasks: relayB, StateRouter: router}, reportTool(t, relayB))
	router.to, _ = url.Parse(a.url)
	send := func(endpoint, key, version, method, params string, header map[string]string) (int, string) {
		t.Helper()
		h := map[string]string{"Mcp-Protocol-Version": version, "Authorization": "Bearer " + key}
		for k, v := range header {
			h[k] = v
		}
		resp, body := post(t, endpoint, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`, h)
		return resp.StatusCode, body
	}
	if _, body := send(a.url, apiKey, kernel.TaskVersion, "tools/call", `{"name":"report","arguments":{"topic":"x"},"task":{}}`, nil); !strings.Contains(body, `"taskId":"t-x"`) {
		t.Fatalf("the task on A: %s", body)
	}

	headersBefore, _ := a.got()
	for _, m := range []string{"tasks/get", "tasks/result"} {
		if code, body := send(b.url, apiKey, kernel.TaskVersion, m, `{"taskId":"t-x"}`, map[string]string{"Cookie": "c=secret"}); code != http.StatusOK || !strings.Contains(body, "t-x") || strings.Contains(body, `"error"`) {
			t.Fatalf("%s on B: %d %s", m, code, body)
		}
	}
	if _, body := send(b.url, freeKey, kernel.TaskVersion, "tasks/get", `{"taskId":"t-x"}`, nil); !strings.Contains(body, "Task not found") {
		t.Fatalf("bob's tasks/get on B: %s", body)
	}
	if asked := router.askedTasks(); !slices.Equal(asked, []string{"alice:t-x", "alice:t-x", "bob:t-x"}) {
		t.Fatalf("the router was asked about %v", asked)
	}
	headers, recA := a.got()
	if len(headers) != len(headersBefore)+3 {
		t.Fatalf("A got %d requests for three forwarded ones", len(headers)-len(headersBefore))
	}
	for _, h := range headers[len(headersBefore):] {
		if h.Get(kernel.ForwardedHeader) != "1" || h.Get("Cookie") != "" || !strings.HasPrefix(h.Get("Authorization"), "Bearer ") {
			t.Fatalf("a forwarded request's headers: %v", h)
		}
	}
	if last := recA[len(recA)-1]; last.Tool != "tasks/result" || last.Outcome != audit.OK || last.Principal != "alice" {
		t.Fatalf("A's record of tasks/result: %+v", last)
	}
	_, recB := b.got()
	if len(recB) != 3 || recB[0].Tool != "tasks/get" || recB[1].Tool != "tasks/result" || recB[0].Outcome != audit.Forwarded {
		t.Fatalf("B's records: %+v", recB)
	}

	// Never asked about:
	asked := len(router.askedTasks())
	send(b.url, apiKey, kernel.TaskVersion, "tasks/list", `{}`, nil)
	send(b.url, apiKey, kernel.TaskVersion, "tasks/get", `{}`, nil)
	send(b.url, apiKey, kernel.TaskVersion, "tasks/get", `{"taskId":7}`, nil)
	send(b.url, apiKey, "2025-06-18", "tasks/get", `{"taskId":"t-x"}`, nil)
	if code, body := send(b.url, apiKey, kernel.TaskVersion, "tasks/get", `{"taskId":"t-x"}`, map[string]string{kernel.ForwardedHeader: "1"}); !strings.Contains(body, "Task not found") {
		t.Fatalf("a marked request on B: %d %s", code, body)
	}
	if n := len(router.askedTasks()); n != asked {
		t.Fatalf("the router was asked about %v", router.askedTasks()[asked:])
	}

	router.err = errors.New("store down")
	if code, body := send(b.url, apiKey, kernel.TaskVersion, "tasks/cancel", `{"taskId":"t-x"}`, nil); code != http.StatusServiceUnavailable || !strings.Contains(body, "store_unavailable") {
		t.Fatalf("tasks/cancel with the router failing: %d %s", code, body)
	}
}
