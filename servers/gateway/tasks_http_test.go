package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// hostileTasks serves the fake task receiver over Streamable HTTP
// (mcpupstream.TaskHandler) and, when told to, answers one task method
// with something other than its answer.
type hostileTasks struct {
	inner   http.Handler
	trap    *httptest.Server
	trapped atomic.Int64
	mu      sync.Mutex
	method  string // "tools/call" (task-augmented), "tasks/get", "tasks/result"…
	mode    string // "" behaves
	seen    []string
}

func (h *hostileTasks) set(method, mode string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.method, h.mode = method, mode
}

func (h *hostileTasks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Task   json.RawMessage `json:"task"`
			TaskID string          `json:"taskId"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	h.mu.Lock()
	method, mode := h.method, h.mode
	if strings.HasPrefix(m.Method, "tasks/") || len(m.Params.Task) > 0 {
		h.seen = append(h.seen, m.Method+" "+r.Header.Get("Mcp-Protocol-Version")+" "+r.Header.Get("Authorization"))
	}
	h.mu.Unlock()
	if mode == "" || m.Method != method || (method == "tools/call" && len(m.Params.Task) == 0) {
		h.inner.ServeHTTP(w, r)
		return
	}
	answer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
	}
	task := func(id, status string) string {
		t := `{"taskId":"` + id + `","status":"` + status + `","statusMessage":"` + mcpupstream.Secret + `"}`
		if method == "tools/call" {
			return `{"task":` + t + `}`
		}
		return t
	}
	switch mode {
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"task":`+mcpupstream.Secret)
	case "oversized":
		answer(`{"task":{"taskId":"task-1","status":"working","statusMessage":"` + strings.Repeat("x", 200<<10) + `"}}`)
	case "undeclared":
		answer(task(m.Params.TaskID+"task-1", "paused"))
	case "other":
		answer(task("task-999", "completed"))
	case "wrongid":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"someone-else","result":`+task("task-1", "working")+`}`)
	case "redirect":
		http.Redirect(w, r, h.trap.URL, http.StatusTemporaryRedirect)
	case "status":
		http.Error(w, mcpupstream.Secret, http.StatusInternalServerError)
	case "hang":
		<-r.Context().Done()
	case "sse": // the answer on an event stream, after other messages
		rec := httptest.NewRecorder()
		h.inner.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"+
			"data: {\"jsonrpc\":\"2.0\",\"id\":\"someone-else\",\"result\":{\"taskId\":\"task-999\",\"status\":\"completed\"}}\r\n\r\n"+
			"data: "+rec.Body.String()+"\n\n")
	case "sse-endless": // noise, never the answer
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 10000 && r.Context().Err() == nil; i++ {
			if _, err := io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"); err != nil {
				return
			}
		}
	}
}

// taskHTTPUpstream is the fake task receiver as a URL upstream named "tk".
func taskHTTPUpstream(t *testing.T, jsonResponse bool) (gateway.Upstream, *hostileTasks) {
	t.Helper()
	fake := mcpupstream.NewServer(&mcpupstream.Options{Tasks: true, Versions: []string{"2025-11-25"}})
	h := &hostileTasks{inner: mcpupstream.TaskHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fake },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))}
	h.trap = httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { h.trapped.Add(1) }))
	t.Cleanup(h.trap.Close)
	u := httpUpstream(t, h)
	u.Name = "tk"
	u.ReadOnlyTools = taskUpstream().ReadOnlyTools
	return u, h
}

// TestTasksRelayedFromAURLUpstream: a URL upstream that declares tasks on
// 2025-11-25 has them relayed as a stdio child's are: a 2025-11-25 client
// sees the capability and the task-only tool, creates a task, polls it,
// fetches its result enveloped and scrubbed, lists and cancels — every
// task request posted on the upstream's session, with its protocol
// version and its credential.
func TestTasksRelayedFromAURLUpstream(t *testing.T) {
	u, h := taskHTTPUpstream(t, true)
	f := taskFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	c := newRawStdio(t, f.ks, "2025-11-25", `{}`)
	if tr := c.transcript(); !strings.Contains(tr, `"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`) {
		t.Fatalf("no tasks capability at initialize:\n%s", tr)
	}
	list := string(c.call(newID(), "tools/list", `{}`)["result"])
	if !strings.Contains(list, `"execution":{"taskSupport":"required"}`) || !strings.Contains(list, `"name":"tk.research"`) ||
		!strings.Contains(list, `"execution":{"taskSupport":"optional"}`) {
		t.Fatalf("task tools of the URL upstream not listed with their task support: %s", list)
	}
	old := newRawStdio(t, f.ks, "2025-06-18", `{}`)
	if l := string(old.call(newID(), "tools/list", `{}`)["result"]); strings.Contains(l, "tk.research") || strings.Contains(l, "execution") || !strings.Contains(l, "tk.slow_echo") {
		t.Errorf("tools/list for 2025-06-18: %s", l)
	}
	if ins := f.gw.Instructions(); !strings.Contains(ins, `listed only to clients of MCP 2025-11-25, whose protocol has tasks: "research".`) {
		t.Errorf("instructions: %s", ins)
	}
	task := createTask(t, c, "tk.research", `{"text":"q1"}`)
	if !strings.HasPrefix(task.TaskID, "tk.") || len(task.TaskID) < 20 || task.Status != "working" {
		t.Fatalf("created task: %+v", task)
	}
	if done := waitTask(t, c, task.TaskID); done.Status != "completed" || !strings.Contains(done.StatusMessage, `[the MCP server "tk" says]`) {
		t.Fatalf("task: %+v", done)
	}
	body := string(c.call(newID(), "tasks/result", `{"taskId":"`+task.TaskID+`"}`)["result"])
	if !strings.Contains(body, `untrusted-data source=\"mcp-upstream\"`) || !strings.Contains(body, `\"api_key\":\"[redacted]\"`) {
		t.Fatalf("result not enveloped: %s", body)
	}
	if !strings.Contains(body, `"io.modelcontextprotocol/related-task":{"taskId":"`+task.TaskID+`"}`) {
		t.Errorf("related-task does not name the gateway's id: %s", body)
	}
	tasks := result[struct {
		Tasks []taskView `json:"tasks"`
	}](t, c.call(newID(), "tasks/list", `{}`))
	if len(tasks.Tasks) != 1 || tasks.Tasks[0].TaskID != task.TaskID {
		t.Fatalf("tasks/list: %+v", tasks)
	}
	hang := createTask(t, c, "tk.slow_echo", `{"text":"hang"}`)
	if got := result[taskView](t, c.call(newID(), "tasks/cancel", `{"taskId":"`+hang.TaskID+`"}`)); got.Status != "cancelled" {
		t.Fatalf("cancel: %+v", got)
	}
	checkHostileStrings(t, c.transcript())
	h.mu.Lock()
	seen := append([]string(nil), h.seen...)
	h.mu.Unlock()
	for _, want := range []string{"tools/call", "tasks/get", "tasks/result", "tasks/cancel"} {
		found := false
		for _, s := range seen {
			found = found || strings.HasPrefix(s, want+" 2025-11-25 Bearer "+upstreamCredential)
		}
		if !found {
			t.Errorf("no %s with the session's version and the credential: %q", want, seen)
		}
	}
}

// TestHostileURLUpstreamTasks: a URL upstream that answers a task request
// with garbage, a body over the cap, a status 2025-11-25 does not define,
// another task, an answer to another request, a redirect, an HTTP error,
// or not at all (within the call's timeout) gives the client a clear
// error — a failed task, a tool error of tasks/result, a -32603 of
// tasks/get — and nothing it wrote; the redirect is not followed; another
// principal still gets "not found" whatever the upstream does.
func TestHostileURLUpstreamTasks(t *testing.T) {
	u, h := taskHTTPUpstream(t, true)
	u.MaxResultBytes = 4096 // the body cap: 2×4096 + 64 KiB
	u.CallTimeout = gateway.Duration(time.Second)
	f := taskFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	cs := httpTaskClients(t, f, "alice", "bob")
	alice, bob := cs[0], cs[1]
	task := createTask(t, alice, "tk.research", `{"text":"long","ms":60000}`)
	_, notFound := rpcErr(t, bob.call(newID(), "tasks/get", `{"taskId":"tk.does-not-exist"}`))
	h.set("tasks/get", "sse")
	if got := result[taskView](t, alice.call(newID(), "tasks/get", `{"taskId":"`+task.TaskID+`"}`)); got.Status != "working" || got.TaskID != task.TaskID {
		t.Errorf("tasks/get answered on an event stream: %+v", got)
	}
	bad := []string{"garbage", "oversized", "undeclared", "other", "wrongid", "redirect", "status", "sse-endless"}
	for _, mode := range append(bad, "hang") { // tasks/get waits 5 s at most
		h.set("tasks/get", mode)
		if code, msg := rpcErr(t, alice.call(newID(), "tasks/get", `{"taskId":"`+task.TaskID+`"}`)); code != -32603 || !strings.Contains(msg, `"tk"`) {
			t.Errorf("tasks/get answered %s: %d %q", mode, code, msg)
		}
		for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
			if code, msg := rpcErr(t, bob.call(newID(), method, `{"taskId":"`+task.TaskID+`"}`)); code != -32602 || msg != notFound {
				t.Errorf("bob's %s of alice's task while the upstream answers %s: %d %q", method, mode, code, msg)
			}
		}
	}
	for _, mode := range []string{"garbage", "other", "hang"} { // tasks/cancel too
		h.set("tasks/cancel", mode)
		if code, msg := rpcErr(t, alice.call(newID(), "tasks/cancel", `{"taskId":"`+task.TaskID+`"}`)); code != -32603 || !strings.Contains(msg, `"tk"`) {
			t.Errorf("tasks/cancel answered %s: %d %q", mode, code, msg)
		}
	}
	for _, mode := range append(bad, "hang") {
		if mode == "other" { // a new task's id is the upstream's to choose
			continue
		}
		h.set("tools/call", mode)
		tv := createTask(t, alice, "tk.slow_echo", `{"text":"x"}`)
		res := string(alice.call(newID(), "tasks/result", `{"taskId":"`+tv.TaskID+`"}`)["result"])
		want := "upstream_error"
		if mode == "hang" {
			want = "timeout"
		}
		if tv.Status != "failed" || !strings.Contains(res, `"isError":true`) || !strings.Contains(res, want) {
			t.Errorf("a task-augmented call answered %s: %+v %s", mode, tv, res)
		}
	}
	for _, mode := range append(bad, "hang") {
		if mode == "undeclared" || mode == "other" { // tasks/result carries no task
			continue
		}
		h.set("tasks/result", mode)
		res := string(alice.call(newID(), "tasks/result", `{"taskId":"`+task.TaskID+`"}`)["result"])
		want := "upstream_error"
		if mode == "hang" {
			want = "timeout"
		}
		if !strings.Contains(res, `"isError":true`) || !strings.Contains(res, want) {
			t.Errorf("tasks/result answered %s: %s", mode, res)
		}
	}
	h.set("", "")
	if got := result[taskView](t, alice.call(newID(), "tasks/get", `{"taskId":"`+task.TaskID+`"}`)); got.Status != "working" {
		t.Errorf("alice's task once the upstream behaves: %+v", got)
	}
	if l := string(bob.call(newID(), "tasks/list", `{}`)["result"]); l != `{"tasks":[]}` {
		t.Errorf("bob's tasks/list: %s", l)
	}
	if n := h.trapped.Load(); n != 0 {
		t.Errorf("a redirect was followed %d times", n)
	}
	checkHostileStrings(t, alice.all.String())
}
