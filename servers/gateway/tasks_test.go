package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// taskUpstream is the fake as a 2025-11-25 task receiver (TasksVar).
func taskUpstream() gateway.Upstream {
	return gateway.Upstream{Name: "tk", Command: os.Args[0],
		Env:           []string{mcpupstream.EnvVar, mcpupstream.TasksVar, mcpupstream.VersionsVar},
		PublicEnv:     []string{mcpupstream.EnvVar, mcpupstream.TasksVar, mcpupstream.VersionsVar},
		ReadOnlyTools: []string{"research", "slow_echo", "tasks_created", "echo", "inject", "secret"}}
}

func taskEnv(name string) string {
	switch name {
	case mcpupstream.TasksVar:
		return "1"
	case mcpupstream.VersionsVar:
		return "2025-11-25"
	}
	return testEnv(name)
}

func taskFixture(t *testing.T, o options) *fixture {
	t.Helper()
	if len(o.cfg.Upstreams) == 0 {
		o.cfg.Upstreams = []gateway.Upstream{taskUpstream()}
	}
	o.getenv = taskEnv
	o.kopts.Secrets = append(o.kopts.Secrets, mcpupstream.Secret)
	return newFixture(t, o)
}

// rawStdio is a raw JSON-RPC client of a kernel served over stdio.
type rawStdio struct {
	t     *testing.T
	w     *os.File
	mu    sync.Mutex
	resp  map[string]chan json.RawMessage
	notes []string
	all   strings.Builder
}

func newRawStdio(t *testing.T, ks *kernel.Server, version string, caps string) *rawStdio {
	t.Helper()
	return newRawStdioWith(t, ks, version, caps, kernel.StdioOptions{})
}

func newRawStdioWith(t *testing.T, ks *kernel.Server, version string, caps string, opts kernel.StdioOptions) *rawStdio {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); _ = ks.ServeStdioWith(ctx, inR, outW, opts); outW.Close() }()
	c := &rawStdio{t: t, w: inW, resp: map[string]chan json.RawMessage{}}
	go func() {
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				_ = json.Unmarshal(line, &m)
				c.mu.Lock()
				c.all.Write(line)
				if m.Method != "" {
					c.notes = append(c.notes, string(line))
				} else if ch := c.resp[string(m.ID)]; ch != nil {
					ch <- json.RawMessage(line)
				}
				c.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { inW.Close(); cancel(); <-served; outR.Close() })
	c.call(`"init"`, "initialize", `{"protocolVersion":"`+version+`","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *rawStdio) send(line string) {
	if _, err := c.w.WriteString(line + "\n"); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns the whole response message.
func (c *rawStdio) call(id, method, params string) map[string]json.RawMessage {
	c.t.Helper()
	ch := make(chan json.RawMessage, 1)
	c.mu.Lock()
	c.resp[id] = ch
	c.mu.Unlock()
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	select {
	case b := <-ch:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatal(err)
		}
		return m
	case <-time.After(20 * time.Second):
		c.t.Fatalf("no answer to %s %s", method, id)
	}
	return nil
}

func (c *rawStdio) transcript() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all.String()
}

// taskClient speaks the task requests over one transport.
type taskClient interface {
	call(id, method, params string) map[string]json.RawMessage
}

var nextID int
var idMu sync.Mutex

func newID() string {
	idMu.Lock()
	defer idMu.Unlock()
	nextID++
	return fmt.Sprint(nextID)
}

type taskView struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval"`
}

func result[T any](t *testing.T, m map[string]json.RawMessage) T {
	t.Helper()
	var v T
	if m["error"] != nil {
		t.Fatalf("want a result, got the error %s", m["error"])
	}
	if err := json.Unmarshal(m["result"], &v); err != nil {
		t.Fatalf("result %s: %v", m["result"], err)
	}
	return v
}

func rpcErr(t *testing.T, m map[string]json.RawMessage) (int, string) {
	t.Helper()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if m["error"] == nil {
		t.Fatalf("want an error, got %s", m["result"])
	}
	_ = json.Unmarshal(m["error"], &e)
	return e.Code, e.Message
}

func createTask(t *testing.T, c taskClient, tool, args string) taskView {
	t.Helper()
	m := c.call(newID(), "tools/call", `{"name":"`+tool+`","arguments":`+args+`,"task":{"ttl":60000}}`)
	r := result[struct {
		Task taskView `json:"task"`
	}](t, m)
	if r.Task.TaskID == "" {
		t.Fatalf("no task: %s", m["result"])
	}
	return r.Task
}

func waitTask(t *testing.T, c taskClient, id string) taskView {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		tv := result[taskView](t, c.call(newID(), "tasks/get", `{"taskId":"`+id+`"}`))
		if tv.Status != kernel.TaskWorking || time.Now().After(deadline) {
			return tv
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkHostileStrings: nothing the hostile upstream wrote reaches the
// client raw: its secret is scrubbed, its task ids replaced.
func checkHostileStrings(t *testing.T, wire string) {
	t.Helper()
	if strings.Contains(wire, mcpupstream.Secret) {
		t.Errorf("the upstream's secret reached the client:\n%s", wire)
	}
	if strings.Contains(wire, `"task-`) {
		t.Errorf("an upstream task id reached the client:\n%s", wire)
	}
}

// TestTasksRelayedOverStdio: a 2025-11-25 client over stdio sees the tasks
// capability and the tools' taskSupport, creates a task of a task-only tool,
// polls it, gets its result enveloped and scrubbed, lists and cancels.
func TestTasksRelayedOverStdio(t *testing.T) {
	f := taskFixture(t, options{})
	c := newRawStdio(t, f.ks, "2025-11-25", `{}`)
	if tr := c.transcript(); !strings.Contains(tr, `"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`) {
		t.Fatalf("no tasks capability at initialize:\n%s", tr)
	}
	list := result[struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}](t, c.call(newID(), "tools/list", `{}`))
	support := map[string]string{}
	for _, tl := range list.Tools {
		if tl.Execution != nil {
			support[tl.Name] = tl.Execution.TaskSupport
		}
	}
	if support["tk.research"] != "required" || support["tk.slow_echo"] != "optional" || len(support) != 2 {
		t.Fatalf("taskSupport in tools/list: %v", support)
	}

	task := createTask(t, c, "tk.research", `{"text":"q1"}`)
	if !strings.HasPrefix(task.TaskID, "tk.") || len(task.TaskID) < 20 || task.Status != "working" {
		t.Fatalf("created task: %+v", task)
	}
	if ins := f.gw.Instructions(); !strings.Contains(ins, `Its tools that can only run as tasks are listed only to clients of MCP 2025-11-25, whose protocol has tasks: "research".`) {
		t.Errorf("instructions: %s", ins)
	}
	if !strings.Contains(task.StatusMessage, "[the MCP server \"tk\" says]") {
		t.Errorf("status message not marked as the server's: %q", task.StatusMessage)
	}
	done := waitTask(t, c, task.TaskID)
	if done.Status != "completed" {
		t.Fatalf("task: %+v", done)
	}
	res := c.call(newID(), "tasks/result", `{"taskId":"`+task.TaskID+`"}`)
	body := string(res["result"])
	if !strings.Contains(body, `untrusted-data source=\"mcp-upstream\"`) || !strings.Contains(body, "tag(s) inside the data were neutralized") {
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
	cancelled := result[taskView](t, c.call(newID(), "tasks/cancel", `{"taskId":"`+hang.TaskID+`"}`))
	if cancelled.Status != "cancelled" {
		t.Fatalf("cancel: %+v", cancelled)
	}
	// the audit has the two calls, as any call's
	n := 0
	for _, r := range f.records() {
		if r.Tool == "tk.research" || r.Tool == "tk.slow_echo" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("audit records of the task calls: %d, want 2", n)
	}
	if tr := c.transcript(); strings.Contains(tr, "notifications/tasks/status") {
		t.Errorf("an upstream's task status notification was relayed:\n%s", tr)
	}
	checkHostileStrings(t, c.transcript())
}

// TestTasksNotDeclaredWhereNotRouted: the go-sdk-only stdio path
// (StdioOptions.DisableFastPath) does not answer task requests, so a
// 2025-11-25 client there is not told of tasks and does not see the
// task-only tool.
func TestTasksNotDeclaredWhereNotRouted(t *testing.T) {
	f := taskFixture(t, options{})
	c := newRawStdioWith(t, f.ks, "2025-11-25", `{}`, kernel.StdioOptions{DisableFastPath: true})
	if tr := c.transcript(); strings.Contains(tr, `"tasks"`) {
		t.Fatalf("tasks declared on the go-sdk-only path:\n%s", tr)
	}
	list := string(c.call(newID(), "tools/list", `{}`)["result"])
	if strings.Contains(list, "tk.research") || strings.Contains(list, "execution") {
		t.Fatalf("tools/list on the go-sdk-only path: %s", list)
	}
}

// TestTaskOnlyToolsHiddenWithoutTasks: a client whose protocol has no
// tasks (2025-06-18) sees neither the capability nor a task-only tool, and
// a plain call of one is refused without reaching the upstream.
func TestTaskOnlyToolsHiddenWithoutTasks(t *testing.T) {
	f := taskFixture(t, options{})
	c := newRawStdio(t, f.ks, "2025-06-18", `{}`)
	if tr := c.transcript(); strings.Contains(tr, `"tasks"`) {
		t.Fatalf("tasks declared to a 2025-06-18 client:\n%s", tr)
	}
	list := string(c.call(newID(), "tools/list", `{}`)["result"])
	if strings.Contains(list, "tk.research") || !strings.Contains(list, "tk.slow_echo") || strings.Contains(list, "execution") {
		t.Fatalf("tools/list for 2025-06-18: %s", list)
	}
	m := c.call(newID(), "tasks/get", `{"taskId":"tk.x"}`)
	if code, _ := rpcErr(t, m); code != -32601 {
		t.Fatalf("tasks/get on 2025-06-18: %d", code)
	}
	// a 2025-11-25 client calling the task-only tool without a task
	c2 := newRawStdio(t, f.ks, "2025-11-25", `{}`)
	res := string(c2.call(newID(), "tools/call", `{"name":"tk.research","arguments":{}}`)["result"])
	if !strings.Contains(res, "failed_precondition") || !strings.Contains(res, "runs only as a task") {
		t.Fatalf("plain call of a task-only tool: %s", res)
	}
	if n := tasksCreated(t, c2); n != "0" {
		t.Fatalf("the upstream received %s task calls", n)
	}
	// over HTTP, by the request's protocol version
	url := mcptest.ServeHTTP(t, f.ks, kernel.HTTPOptions{})
	for v, want := range map[string]bool{"2025-06-18": false, "2025-11-25": true} {
		_, body := mcptest.Post(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, map[string]string{"Mcp-Protocol-Version": v})
		if got := strings.Contains(body, `"execution":{"taskSupport":"required"},`) || strings.Contains(body, `"name":"tk.research"`); got != want {
			t.Errorf("HTTP %s: task-only tool listed %v, want %v: %.300s", v, got, want, body)
		}
		_, body = mcptest.Post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tasks/list","params":{}}`, map[string]string{"Mcp-Protocol-Version": v})
		if strings.Contains(body, `"tasks":[`) != want {
			t.Errorf("HTTP %s: tasks/list answered %v: %s", v, !want, body)
		}
	}
}

func tasksCreated(t *testing.T, c taskClient) string {
	t.Helper()
	res := string(c.call(newID(), "tools/call", `{"name":"tk.tasks_created","arguments":{}}`)["result"])
	for _, n := range []string{"0", "1", "2", "3", "32", "33"} {
		if strings.Contains(res, `\n`+n+`\n`) {
			return n
		}
	}
	return res
}

// httpTasks is a raw 2025-11-25 HTTP client with a principal.
type httpTasks struct {
	t    *testing.T
	url  string
	user string
	all  *strings.Builder
	mu   *sync.Mutex
}

func (h httpTasks) call(id, method, params string) map[string]json.RawMessage {
	h.t.Helper()
	resp, body := mcptest.Post(h.t, h.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+`}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25", "X-Test-User": h.user})
	h.mu.Lock()
	h.all.WriteString(body + "\n")
	h.mu.Unlock()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("%s: %d %s", method, resp.StatusCode, body)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		h.t.Fatalf("%s: %s", method, body)
	}
	return m
}

// userAuth takes the principal from X-Test-User (tests only).
type userAuth struct{}

func (userAuth) Authenticate(r *http.Request) (identity.Principal, error) {
	return identity.Principal{ID: r.Header.Get("X-Test-User"), Scheme: "test"}, nil
}

func httpTaskClients(t *testing.T, f *fixture, users ...string) []httpTasks {
	url := mcptest.ServeHTTP(t, f.ks, kernel.HTTPOptions{Auth: userAuth{}})
	var all strings.Builder
	mu := &sync.Mutex{}
	var out []httpTasks
	for _, u := range users {
		out = append(out, httpTasks{t: t, url: url, user: u, all: &all, mu: mu})
	}
	return out
}

// TestTasksAreBoundToTheirPrincipal: over HTTP, alice's task is hers:
// bob's tasks/get, tasks/result and tasks/cancel of its id answer as for
// an id that does not exist, and his tasks/list is empty; guessed and
// upstream ids, and an id longer than any, are not found either.
func TestTasksAreBoundToTheirPrincipal(t *testing.T) {
	f := taskFixture(t, options{})
	cs := httpTaskClients(t, f, "alice", "bob")
	alice, bob := cs[0], cs[1]
	task := createTask(t, alice, "tk.research", `{"text":"mine","ms":300}`)
	_, notFound := rpcErr(t, bob.call(newID(), "tasks/get", `{"taskId":"tk.does-not-exist"}`))
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		for _, id := range []string{task.TaskID, "task-1", "tk.task-1", strings.Repeat("x", 5000)} {
			code, msg := rpcErr(t, bob.call(newID(), method, `{"taskId":"`+id+`"}`))
			if code != -32602 || msg != notFound {
				t.Errorf("bob's %s of %.20q: %d %q, want the unknown id's %q", method, id, code, msg, notFound)
			}
		}
	}
	if l := string(bob.call(newID(), "tasks/list", `{}`)["result"]); l != `{"tasks":[]}` {
		t.Errorf("bob's tasks/list: %s", l)
	}
	if got := waitTask(t, alice, task.TaskID); got.Status != "completed" {
		t.Fatalf("alice's task after bob's attempts: %+v", got)
	}
	if l := result[struct{ Tasks []taskView }](t, alice.call(newID(), "tasks/list", `{}`)); len(l.Tasks) != 1 {
		t.Errorf("alice's tasks/list: %+v", l)
	}
	checkHostileStrings(t, alice.all.String())
}

// TestTaskParamsRefused: malformed task requests are -32602, a tool
// without task support is -32601, and an oversized or deeply nested
// params.task does not reach the upstream.
func TestTaskParamsRefused(t *testing.T) {
	f := taskFixture(t, options{})
	c := httpTaskClients(t, f, "alice")[0]
	for _, tc := range []struct{ method, params string }{
		{"tools/call", `{"name":"tk.research","arguments":{},"task":"soon"}`},
		{"tools/call", `{"name":"tk.research","arguments":{},"task":{"ttl":-1}}`},
		{"tools/call", `{"name":"tk.research","arguments":{},"task":{"ttl":1.5}}`},
		{"tasks/get", `{}`},
		{"tasks/get", `{"taskId":7}`},
		{"tasks/list", `{"cursor":3}`},
		{"tasks/list", `{"cursor":"next"}`},
	} {
		if code, _ := rpcErr(t, c.call(newID(), tc.method, tc.params)); code != -32602 {
			t.Errorf("%s %s: %d, want -32602", tc.method, tc.params, code)
		}
	}
	if code, _ := rpcErr(t, c.call(newID(), "tools/call", `{"name":"tk.echo","arguments":{"text":"x"},"task":{}}`)); code != -32601 {
		t.Errorf("a task of a tool without task support: %d, want -32601", code)
	}
	deep := strings.Repeat(`{"a":`, 900) + "1" + strings.Repeat("}", 900)
	m := c.call(newID(), "tools/call", `{"name":"tk.research","arguments":{},"task":{"ttl":1000,"x":`+deep+`}}`)
	if m["error"] == nil {
		_ = result[struct{ Task taskView }](t, m) // an unknown member is ignored, as 2025-11-25 allows
	}
	big := strings.Repeat("a", 1<<20)
	m = c.call(newID(), "tools/call", `{"name":"tk.research","arguments":{"text":"`+big+`"},"task":{}}`)
	_ = m // accepted or refused by the body limit: either way the wire checks below hold
	checkHostileStrings(t, c.all.String())
}

// TestTaskBudget: a principal has at most 32 unfinished tasks; the 33rd
// call is refused before anything is sent upstream, and another principal
// is not affected.
func TestTaskBudget(t *testing.T) {
	f := taskFixture(t, options{})
	cs := httpTaskClients(t, f, "alice", "bob")
	alice, bob := cs[0], cs[1]
	for range 32 {
		createTask(t, alice, "tk.slow_echo", `{"text":"hang"}`)
	}
	over := createTask(t, alice, "tk.slow_echo", `{"text":"hang"}`)
	if over.Status != "failed" {
		t.Fatalf("the 33rd task: %+v", over)
	}
	res := string(alice.call(newID(), "tasks/result", `{"taskId":"`+over.TaskID+`"}`)["result"])
	if !strings.Contains(res, "resource_exhausted") {
		t.Fatalf("the 33rd task's result: %s", res)
	}
	if n := tasksCreated(t, alice); n != "32" {
		t.Fatalf("the upstream received %s task calls, want 32", n)
	}
	createTask(t, bob, "tk.slow_echo", `{"text":"hang"}`)
	if n := tasksCreated(t, alice); n != "33" {
		t.Fatalf("bob's task was not sent: %s", n)
	}
}

// TestTaskCallGoesThroughTheControls: a task-augmented call of a gated
// tool gets the confirmation refusal (as a failed task whose result
// carries the token) and runs once confirmed; a denied tool does not
// exist for tasks either.
func TestTaskCallGoesThroughTheControls(t *testing.T) {
	u := taskUpstream()
	u.ReadOnlyTools = []string{"tasks_created"} // research and slow_echo are gated
	f := taskFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}, kopts: kernel.Options{Deny: []string{"tk.slow_echo"}}})
	c := httpTaskClients(t, f, "alice")[0]
	refused := createTask(t, c, "tk.research", `{"text":"gated"}`)
	if refused.Status != "failed" {
		t.Fatalf("a gated task call: %+v", refused)
	}
	var out struct {
		StructuredContent struct {
			ConfirmToken string `json:"confirmToken"`
		} `json:"structuredContent"`
	}
	raw := c.call(newID(), "tasks/result", `{"taskId":"`+refused.TaskID+`"}`)
	out = result[struct {
		StructuredContent struct {
			ConfirmToken string `json:"confirmToken"`
		} `json:"structuredContent"`
	}](t, raw)
	if out.StructuredContent.ConfirmToken == "" || !strings.Contains(string(raw["result"]), "confirmation_required") {
		t.Fatalf("refusal: %s", raw["result"])
	}
	if n := tasksCreated(t, c); n != "0" {
		t.Fatalf("sent before confirmation: %s", n)
	}
	task := createTask(t, c, "tk.research", `{"text":"gated","confirmToken":"`+out.StructuredContent.ConfirmToken+`"}`)
	if task.Status != "working" {
		t.Fatalf("confirmed task: %+v", task)
	}
	if code, _ := rpcErr(t, c.call(newID(), "tools/call", `{"name":"tk.slow_echo","arguments":{},"task":{}}`)); code != -32602 {
		t.Fatalf("a denied tool as a task: %d, want -32602 (unknown tool)", code)
	}
}

// TestReplicasTaskIsUnknownOnAnotherReplica: a task lives in the replica
// that created it (its upstream child runs it); polled on another replica,
// its id is unknown, with the same answer as any unknown id.
func TestReplicasTaskIsUnknownOnAnotherReplica(t *testing.T) {
	a, b := taskFixture(t, options{}), taskFixture(t, options{})
	onA, onB := httpTaskClients(t, a, "alice")[0], httpTaskClients(t, b, "alice")[0]
	task := createTask(t, onA, "tk.research", `{"text":"q"}`)
	code, msg := rpcErr(t, onB.call(newID(), "tasks/get", `{"taskId":"`+task.TaskID+`"}`))
	if code != -32602 || msg != "Failed to retrieve task: Task not found" {
		t.Fatalf("on another replica: %d %q", code, msg)
	}
	if got := waitTask(t, onA, task.TaskID); got.Status != "completed" {
		t.Fatalf("on its replica: %+v", got)
	}
}

// TestTasksConcurrentPolls: polls, results and lists of the same tasks at
// once — a relayed one and one refused before it existed, whose stored
// result every tasks/result shares — answer alike (run with -race).
func TestTasksConcurrentPolls(t *testing.T) {
	u := taskUpstream()
	u.ReadOnlyTools = []string{"slow_echo"} // research is gated: its first call is refused
	f := taskFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	c := httpTaskClients(t, f, "alice")[0]
	relayed := createTask(t, c, "tk.slow_echo", `{"text":"q","ms":100}`)
	refused := createTask(t, c, "tk.research", `{"text":"q"}`)
	if refused.Status != "failed" {
		t.Fatalf("refused: %+v", refused)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := relayed.TaskID
			if i%2 == 1 {
				id = refused.TaskID
			}
			for _, m := range []string{"tasks/get", "tasks/result", "tasks/list"} {
				res := c.call(newID(), m, `{"taskId":"`+id+`"}`)
				if res["error"] != nil && m != "tasks/list" {
					t.Errorf("%s %s: %s", m, id, res["error"])
				}
				if m == "tasks/result" && !strings.Contains(string(res["result"]), `related-task":{"taskId":"`+id+`"}`) {
					t.Errorf("tasks/result of %s names another task: %s", id, res["result"])
				}
			}
		}()
	}
	wg.Wait()
}
