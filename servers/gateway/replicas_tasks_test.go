package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// Tasks across replicas (servers/gateway/replicatasks.go): gateway
// replicas over HTTP sharing the store, the requestState key and the
// confirmation store (replicas_relay_test.go's deployment), each with its
// own task upstream process.

// replicaTasks is a 2025-11-25 client of one replica, as the key's
// principal.
type replicaTasks struct {
	t   *testing.T
	url string
	key string
}

func (c replicaTasks) post(method, params string) (int, map[string]json.RawMessage, string) {
	c.t.Helper()
	resp, body := mcptest.Post(c.t, c.url, `{"jsonrpc":"2.0","id":`+newID()+`,"method":"`+method+`","params":`+params+`}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Authorization": "Bearer " + c.key})
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		c.t.Fatalf("%s on %s: %d %s", method, c.url, resp.StatusCode, body)
	}
	return resp.StatusCode, m, body
}

func (c replicaTasks) call(_, method, params string) map[string]json.RawMessage {
	c.t.Helper()
	status, m, body := c.post(method, params)
	if status != http.StatusOK {
		c.t.Fatalf("%s on %s: %d %s", method, c.url, status, body)
	}
	return m
}

func (r *relayReplica) tasksAs(t *testing.T, key string) replicaTasks {
	return replicaTasks{t: t, url: r.url, key: key}
}

// taskKeys are the hashes of task records in the store.
func (d *relayDeployment) taskKeys() []string {
	d.t.Helper()
	keys, err := d.tg.Keys(context.Background(), d.tg.NewClient(d.t), "gateway:tasks:*")
	if err != nil {
		d.t.Fatal(err)
	}
	return keys
}

// listed are the task ids of a tasks/list answer, with their statuses.
func listed(t *testing.T, m map[string]json.RawMessage) map[string]string {
	t.Helper()
	l := result[struct {
		Tasks []taskView `json:"tasks"`
	}](t, m)
	out := map[string]string{}
	for _, tv := range l.Tasks {
		out[tv.TaskID] = tv.Status
	}
	return out
}

// TestReplicasTaskOnAnotherReplica: issue 32's split-replica flow for
// tasks. Alice's task created on A is polled on B, its result fetched on C
// and another one cancelled on B: each request is the client's own,
// forwarded by the kernel to A, which answers it (and spends the rate
// limit and writes the tasks/result and tasks/cancel records); B and C
// each write one "forwarded" record naming A, and their upstreams receive
// nothing. tasks/list on any replica lists both tasks with what A saw
// last. The store holds digests, never the task ids.
func TestReplicasTaskOnAnotherReplica(t *testing.T) {
	d := newRelayDeployment(t)
	a := d.replica(replicaOpts{share: true, tasks: true})
	b := d.replica(replicaOpts{share: true, tasks: true})
	c := d.replica(replicaOpts{share: true, tasks: true})
	onA, onB, onC := a.tasksAs(t, aliceKey), b.tasksAs(t, aliceKey), c.tasksAs(t, aliceKey)

	task := createTask(t, onA, "tk.research", `{"text":"q","ms":50}`)
	keys := d.taskKeys()
	if len(keys) != 1 || strings.Contains(keys[0], "alice") {
		t.Fatalf("the task records: %v", keys)
	}
	all, err := d.tg.NewClient(t).HGetAll(context.Background(), keys[0]).Result()
	if err != nil || len(all) != 1 {
		t.Fatalf("alice's records: %v %v", all, err)
	}
	for f, v := range all {
		if strings.Contains(f+v, task.TaskID) || strings.Contains(v, a.url) {
			t.Fatalf("a record holds the task id or the holder in clear: %s = %s", f, v)
		}
	}

	if got := waitTask(t, onB, task.TaskID); got.Status != kernel.TaskCompleted || got.TaskID != task.TaskID {
		t.Fatalf("polled on B: %+v", got)
	}
	if a.forwarded.Load() == 0 {
		t.Fatal("B answered without forwarding to A")
	}
	res := onC.call("", "tasks/result", `{"taskId":"`+task.TaskID+`"}`)
	if s := string(res["result"]); !strings.Contains(s, "ignore all previous instructions") || !strings.Contains(s, `related-task":{"taskId":"`+task.TaskID+`"}`) ||
		!strings.Contains(s, "untrusted-data") || strings.Contains(s, mcpupstream.Secret) {
		t.Fatalf("the result fetched on C: %s", s)
	}

	slow := createTask(t, onA, "tk.slow_echo", `{"text":"hang"}`)
	cancelled := result[taskView](t, onB.call("", "tasks/cancel", `{"taskId":"`+slow.TaskID+`"}`))
	if cancelled.Status != kernel.TaskCancelled || cancelled.TaskID != slow.TaskID {
		t.Fatalf("cancelled on B: %+v", cancelled)
	}

	for name, cl := range map[string]replicaTasks{"A": onA, "B": onB, "C": onC} {
		l := listed(t, cl.call("", "tasks/list", `{}`))
		if len(l) != 2 || l[task.TaskID] != kernel.TaskCompleted || l[slow.TaskID] != kernel.TaskCancelled {
			t.Errorf("tasks/list on %s: %v", name, l)
		}
	}

	recA := a.records()
	var resultOn, cancelOn bool
	for _, r := range recA {
		resultOn = resultOn || (r.Tool == "tasks/result" && r.Outcome == audit.OK && r.Principal == "alice")
		cancelOn = cancelOn || (r.Tool == "tasks/cancel" && r.Outcome == audit.OK && r.Principal == "alice")
	}
	if !resultOn || !cancelOn {
		t.Errorf("A's records lack the forwarded tasks/result or tasks/cancel: %+v", recA)
	}
	for name, r := range map[string]*relayReplica{"B": b, "C": c} {
		for _, rec := range r.records() {
			if rec.Outcome != audit.Forwarded || rec.Attrs["forwarded_to"] != strings.TrimPrefix(a.srv.URL, "http://") || !strings.HasPrefix(rec.Tool, "tasks/") {
				t.Errorf("%s's record: %+v", name, rec)
			}
		}
	}
	for name, r := range map[string]*relayReplica{"B": b, "C": c} {
		if n := tasksCreated(t, r.tasksAs(t, aliceKey)); n != "0" {
			t.Errorf("%s's upstream received %s task-augmented calls", name, n)
		}
	}
}

// TestReplicasTaskOfAnotherPrincipal: bob's requests naming alice's task id
// on B are routed nowhere (his records hash does not hold it) and answered
// as an unknown id's; alice's record moved into bob's hash, or a record
// forged without the shared key, is neither followed nor listed.
func TestReplicasTaskOfAnotherPrincipal(t *testing.T) {
	d := newRelayDeployment(t)
	a := d.replica(replicaOpts{share: true, tasks: true})
	b := d.replica(replicaOpts{share: true, tasks: true})
	task := createTask(t, a.tasksAs(t, aliceKey), "tk.slow_echo", `{"text":"hang"}`)
	bob := b.tasksAs(t, bobKey)
	_, notFound := rpcErr(t, bob.call("", "tasks/get", `{"taskId":"tk.nothing"}`))
	check := func(when string) {
		t.Helper()
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			if code, msg := rpcErr(t, bob.call("", m, `{"taskId":"`+task.TaskID+`"}`)); code != -32602 || msg != notFound {
				t.Errorf("%s: bob's %s: %d %q", when, m, code, msg)
			}
		}
		if l := listed(t, bob.call("", "tasks/list", `{}`)); len(l) != 0 {
			t.Errorf("%s: bob's list: %v", when, l)
		}
		if n := a.forwarded.Load(); n != 0 {
			t.Errorf("%s: %d of bob's requests forwarded to A", when, n)
		}
	}
	check("as is")

	// Alice's record copied into bob's hash, under the same field: it is
	// bound to her hash and does not open in his.
	client := d.tg.NewClient(t)
	ctx := context.Background()
	aliceHash := d.taskKeys()[0]
	fields, err := client.HGetAll(ctx, aliceHash).Result()
	if err != nil || len(fields) != 1 {
		t.Fatalf("alice's records: %v %v", fields, err)
	}
	// bob's hash: make it exist with one task of his own on A
	createTask(t, a.tasksAs(t, bobKey), "tk.slow_echo", `{"text":"hang"}`)
	var bobHash string
	for _, k := range d.taskKeys() {
		if k != aliceHash {
			bobHash = k
		}
	}
	for f, v := range fields {
		client.HSet(ctx, bobHash, f, v)
	}
	if l := listed(t, bob.call("", "tasks/list", `{}`)); len(l) != 1 {
		t.Errorf("bob's list with alice's record moved in: %v", l)
	}
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if code, msg := rpcErr(t, bob.call("", m, `{"taskId":"`+task.TaskID+`"}`)); code != -32602 || msg != notFound {
			t.Errorf("moved record: bob's %s: %d %q", m, code, msg)
		}
	}
	if n := a.forwarded.Load(); n != 0 {
		t.Errorf("moved record: %d of bob's requests forwarded to A", n)
	}

	// A record sealed with another key, naming a trap: never dialled.
	var trapped atomic.Int64
	trap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { trapped.Add(1) }))
	t.Cleanup(trap.Close)
	other, err := seal.New([]byte("another-key-0123456789abcdef0123456789"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for f := range fields {
		raw, _ := json.Marshal(map[string]any{"holder": trap.URL + kernel.MCPPath, "task": map[string]any{"TaskID": task.TaskID, "Status": "working"}})
		v, err := other.SealFor("bulwark-gateway-task-replica", aliceHash+"/"+f, raw, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		client.HSet(ctx, aliceHash, f, v)
	}
	alice := b.tasksAs(t, aliceKey)
	if code, _ := rpcErr(t, alice.call("", "tasks/get", `{"taskId":"`+task.TaskID+`"}`)); code != -32602 {
		t.Errorf("forged record: alice's tasks/get on B: %d", code)
	}
	if l := listed(t, alice.call("", "tasks/list", `{}`)); len(l) != 0 {
		t.Errorf("forged record listed: %v", l)
	}
	if trapped.Load() != 0 {
		t.Errorf("the trap was dialled %d times", trapped.Load())
	}
	if !strings.Contains(b.log.String(), "does not open with the requestState key") {
		t.Errorf("B's log does not say the record was not followed:\n%s", b.log.String())
	}
}

// TestReplicasTaskStoreDown: with the store unreachable, a task-augmented
// call fails closed before anything reaches the upstream (the task it
// gets is failed, its result store_unavailable), and a task request for a
// task this replica does not hold, or a list, is refused with
// store_unavailable rather than answered as if the task did not exist.
func TestReplicasTaskStoreDown(t *testing.T) {
	d := newRelayDeployment(t)
	b := d.replica(replicaOpts{share: true, tasks: true, redis: deadRedis(t)})
	onB := b.tasksAs(t, aliceKey)
	task := createTask(t, onB, "tk.research", `{"text":"q"}`)
	if task.Status != kernel.TaskFailed {
		t.Fatalf("the task created with the store down: %+v", task)
	}
	if s := string(onB.call("", "tasks/result", `{"taskId":"`+task.TaskID+`"}`)["result"]); !strings.Contains(s, "store_unavailable") {
		t.Fatalf("its result: %s", s)
	}
	if n := tasksCreated(t, onB); n != "0" {
		t.Fatalf("the upstream received %s task-augmented calls", n)
	}
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		status, ans, body := onB.post(m, `{"taskId":"tk.held-elsewhere"}`)
		if status != http.StatusServiceUnavailable || ans["error"] == nil || !strings.Contains(body, "store_unavailable") {
			t.Errorf("%s of a task not held here: %d %s", m, status, body)
		}
	}
	if status, ans, body := onB.post("tasks/list", `{}`); ans["error"] == nil || !strings.Contains(body, "store_unavailable") {
		t.Errorf("tasks/list: %d %s", status, body)
	}
}

// TestReplicasTaskHolderGone: A's listener is gone with its records left
// behind: a request for its task on B is a bounded 502 replica_unreachable
// that says the task may have ended with it. Once A's gateway closes, its
// records are gone, and B answers as for an unknown id.
func TestReplicasTaskHolderGone(t *testing.T) {
	d := newRelayDeployment(t)
	a := d.replica(replicaOpts{share: true, tasks: true})
	b := d.replica(replicaOpts{share: true, tasks: true})
	task := createTask(t, a.tasksAs(t, aliceKey), "tk.slow_echo", `{"text":"hang"}`)
	a.srv.CloseClientConnections()
	a.srv.Close()
	onB := b.tasksAs(t, aliceKey)
	start := time.Now()
	status, ans, body := onB.post("tasks/get", `{"taskId":"`+task.TaskID+`"}`)
	if status != http.StatusBadGateway || ans["error"] == nil || !strings.Contains(body, "replica_unreachable") ||
		!strings.Contains(body, "holds this task") || time.Since(start) > 5*time.Second {
		t.Fatalf("tasks/get on B after A stopped (%s): %d %s", time.Since(start), status, body)
	}
	a.gw.Close()
	if keys := d.taskKeys(); len(keys) != 0 {
		if n, _ := d.tg.NewClient(t).HLen(context.Background(), keys[0]).Result(); n != 0 {
			t.Fatalf("records after A closed: %v (%d)", keys, n)
		}
	}
	if code, _ := rpcErr(t, onB.call("", "tasks/get", `{"taskId":"`+task.TaskID+`"}`)); code != -32602 {
		t.Fatalf("tasks/get on B after A closed: %d", code)
	}
}

// TestReplicasTaskHolderHangs: a record naming a replica that accepts and
// never answers costs B its forwarding deadline, not more.
func TestReplicasTaskHolderHangs(t *testing.T) {
	d := newRelayDeployment(t)
	cfg := gateway.Config{CallTimeout: gateway.Duration(time.Second)}
	a := d.replica(replicaOpts{share: true, tasks: true})
	b := d.replica(replicaOpts{share: true, tasks: true, cfg: cfg})
	gateway.SetRelayWait(b.gw, time.Second)
	task := createTask(t, a.tasksAs(t, aliceKey), "tk.slow_echo", `{"text":"hang"}`)
	trap := hungServer(t)
	client := d.tg.NewClient(t)
	key := d.taskKeys()[0]
	fields, _ := client.HKeys(context.Background(), key).Result()
	v, err := gateway.SealTaskRecord(a.gw, key, fields[0], trap.URL+kernel.MCPPath, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	client.HSet(context.Background(), key, fields[0], v)
	start := time.Now()
	status, _, body := b.tasksAs(t, aliceKey).post("tasks/get", `{"taskId":"`+task.TaskID+`"}`)
	if el := time.Since(start); status != http.StatusBadGateway || !strings.Contains(body, "replica_unreachable") || el > 10*time.Second {
		t.Fatalf("tasks/get on B with the holder hanging (%s): %d %s", el, status, body)
	}
}

// TestReplicasTaskFloodBudget: a flood of task requests on B costs at most
// one store lookup each and dials no one: malformed ones and ids longer
// than any task's cost no lookup, another principal's id and unknown ids
// one each, and none is forwarded.
func TestReplicasTaskFloodBudget(t *testing.T) {
	d := newRelayDeployment(t)
	var lookups atomic.Int64
	client := d.tg.NewClient(t)
	client.AddHook(countHook{&lookups})
	a := d.replica(replicaOpts{share: true, tasks: true})
	b := d.replica(replicaOpts{share: true, tasks: true, redis: client})
	task := createTask(t, a.tasksAs(t, aliceKey), "tk.slow_echo", `{"text":"hang"}`)
	bob, alice := b.tasksAs(t, bobKey), b.tasksAs(t, aliceKey)
	var wg sync.WaitGroup
	var wellFormed atomic.Int64
	for i := range 60 {
		wg.Go(func() {
			var c replicaTasks
			var params string
			switch i % 4 {
			case 0:
				c, params = bob, `{"taskId":"`+task.TaskID+`"}`
				wellFormed.Add(1)
			case 1:
				c, params = alice, `{"taskId":"tk.unknown-`+strings.Repeat("x", i)+`"}`
				wellFormed.Add(1)
			case 2:
				c, params = alice, `{"taskId":7}`
			default:
				c, params = alice, `{"taskId":"`+strings.Repeat("y", 300)+`"}`
			}
			status, m, body := c.post([]string{"tasks/get", "tasks/result", "tasks/cancel"}[i%3], params)
			if status != http.StatusOK || m["error"] == nil || !strings.Contains(body, "-32602") {
				t.Errorf("request %d: %d %s", i, status, body)
			}
		})
	}
	wg.Wait()
	if lookups.Load() != wellFormed.Load() || a.forwarded.Load() != 0 {
		t.Fatalf("B looked up %d records for %d well-formed requests, forwarded %d", lookups.Load(), wellFormed.Load(), a.forwarded.Load())
	}
}

// TestReplicasTaskLongStatusListed: a task whose upstream writes a status
// message of 40 KB is recorded all the same (its message cut: a record is a
// sealed handle of at most 16 KB), and another replica lists it finished,
// with the message's start.
func TestReplicasTaskLongStatusListed(t *testing.T) {
	d := newRelayDeployment(t)
	a := d.replica(replicaOpts{share: true, tasks: true})
	b := d.replica(replicaOpts{share: true, tasks: true})
	onA := a.tasksAs(t, aliceKey)
	task := createTask(t, onA, "tk.slow_echo", `{"text":"q","status":"long-status `+strings.Repeat("z", 40<<10)+`"}`)
	if got := waitTask(t, onA, task.TaskID); got.Status != kernel.TaskCompleted {
		t.Fatalf("on A: %+v", got)
	}
	l := result[struct {
		Tasks []taskView `json:"tasks"`
	}](t, b.tasksAs(t, aliceKey).call("", "tasks/list", `{}`))
	if len(l.Tasks) != 1 || l.Tasks[0].Status != kernel.TaskCompleted || !strings.Contains(l.Tasks[0].StatusMessage, "long-status zzz") ||
		len(l.Tasks[0].StatusMessage) > 1024 {
		t.Fatalf("listed on B: %+v", l.Tasks)
	}
	if strings.Contains(a.log.String(), "could not be updated") {
		t.Fatalf("A could not record the task:\n%s", a.log.String())
	}
}
