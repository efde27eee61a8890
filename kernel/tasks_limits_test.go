package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/observe"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

// taskSecret is a configured secret (Options.Secrets) that the relay below
// puts in every text it returns.
const taskSecret = "tsk-SECRET-Zq8Wm3Rx7Lp2Vn6"

// countingTasks is a TaskRelay that counts the requests reaching it. The
// principal "local" holds t-mine (working; its result a report), t-failed
// (its result a tool error) and t-done (finished: cancelling it is
// refused); t-theirs is another principal's. Every text it returns holds
// taskSecret.
type countingTasks struct{ calls atomic.Int64 }

func (r *countingTasks) TaskCapability() *kernel.TaskCapability {
	return &kernel.TaskCapability{List: true, Cancel: true}
}

var taskOwner = map[string]string{"t-mine": "local", "t-failed": "local", "t-done": "local", "t-theirs": "someone-else"}

func (r *countingTasks) mine(p identity.Principal, id string) bool {
	return taskOwner[id] != "" && taskOwner[id] == p.ID
}

func (r *countingTasks) task(id, status string) kernel.Task {
	now := time.Unix(1_800_000_000, 0)
	return kernel.Task{TaskID: id, Status: status, StatusMessage: "working on " + taskSecret, CreatedAt: now, LastUpdatedAt: now}
}

func (r *countingTasks) Refused(context.Context, identity.Principal, string, *mcp.CallToolResult) (kernel.Task, error) {
	r.calls.Add(1)
	return r.task("refused", kernel.TaskFailed), nil
}

func (r *countingTasks) Get(_ context.Context, p identity.Principal, id string) (kernel.Task, error) {
	r.calls.Add(1)
	if !r.mine(p, id) {
		return kernel.Task{}, kernel.ErrNoTask
	}
	return r.task(id, kernel.TaskWorking), nil
}

func (r *countingTasks) Result(_ context.Context, p identity.Principal, id string) (kernel.TaskOutcome, error) {
	r.calls.Add(1)
	switch {
	case !r.mine(p, id):
		return kernel.TaskOutcome{}, kernel.ErrNoTask
	case id == "t-failed":
		return kernel.TaskOutcome{Tool: "report", Err: &kernel.Error{Code: kernel.UpstreamError, Message: "the upstream said " + taskSecret}}, nil
	}
	return kernel.TaskOutcome{Tool: "report", Out: "the report holds " + taskSecret}, nil
}

func (r *countingTasks) List(_ context.Context, p identity.Principal, _ string) ([]kernel.Task, string, error) {
	r.calls.Add(1)
	return []kernel.Task{r.task("t-mine", kernel.TaskWorking)}, "", nil
}

func (r *countingTasks) Cancel(_ context.Context, p identity.Principal, id string) (kernel.Task, error) {
	r.calls.Add(1)
	switch {
	case !r.mine(p, id):
		return kernel.Task{}, kernel.ErrNoTask
	case id == "t-done":
		return kernel.Task{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Cannot cancel task: already in terminal status (" + taskSecret + ")"}
	}
	return r.task(id, kernel.TaskCancelled), nil
}

// taskLimitServer is a server with one tool that may run as a task,
// relay's tasks, a limit of limit calls a minute on a still clock, and log
// as its audit.
func taskLimitServer(t *testing.T, relay kernel.TaskRelay, limit int, log audit.Sink) *kernel.Server {
	return taskLimitServerOn(t, relay, limit, log, nil, kernel.StoreOutage{}, nil)
}

// taskLimitServerOn is taskLimitServer keeping its rate-limit windows in
// store (nil: memory), with outage, observed by obs (nil: none).
func taskLimitServerOn(t *testing.T, relay kernel.TaskRelay, limit int, log audit.Sink, store ratelimit.Store, outage kernel.StoreOutage, obs kernel.Observer) *kernel.Server {
	t.Helper()
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: limit, Window: time.Minute, Now: clock, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	tool := kernel.NewTool(kernel.Spec[struct {
		Topic string `json:"topic"`
	}, any]{
		Name: "report", Description: "Writes a report.", Policy: readPolicy,
		Handle: func(_ context.Context, c *kernel.Call, in struct {
			Topic string `json:"topic"`
		}) (any, error) {
			if _, ok := c.Task(); ok {
				return kernel.TaskCreated{Task: kernel.Task{TaskID: "t-new", Status: kernel.TaskWorking, CreatedAt: now, LastUpdatedAt: now}}, nil
			}
			return "a report on " + in.Topic, nil
		},
	}).TaskSupport(kernel.TaskOptional)
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool},
		&kernel.Options{Tasks: relay, Limiter: lim, Audit: log, Now: clock, Secrets: []string{taskSecret}, StoreOutage: outage, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// taskFront sends one JSON-RPC request line to a 2025-11-25 session and
// returns the HTTP status (0 over stdio), the Retry-After header and the
// body.
type taskFront func(t *testing.T, line string) (status int, retryAfter, body string)

// taskFronts are the fronts that answer task requests: stdio's fast front,
// and HTTP with the fast path and without.
func taskFronts() map[string]func(t *testing.T, srv *kernel.Server) taskFront {
	http := func(disable bool) func(t *testing.T, srv *kernel.Server) taskFront {
		return func(t *testing.T, srv *kernel.Server) taskFront {
			url := mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{DisableFastPath: disable})
			return func(t *testing.T, line string) (int, string, string) {
				resp, b := mcptest.Post(t, url, line, map[string]string{"Mcp-Protocol-Version": kernel.TaskVersion})
				return resp.StatusCode, resp.Header.Get("Retry-After"), b
			}
		}
	}
	return map[string]func(t *testing.T, srv *kernel.Server) taskFront{
		"stdio": func(t *testing.T, srv *kernel.Server) taskFront {
			c := newStdioRoundTrip(t, srv, false)
			return func(t *testing.T, line string) (int, string, string) { return 0, "", c.do(t, line) }
		},
		"http":         http(false),
		"http_no_fast": http(true),
	}
}

func taskReq(id int, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

// refusedByLimit reports whether an answer is the rate-limit refusal a
// call gets: -32000 with data.error rate_limited, over HTTP 429 with
// Retry-After.
func refusedByLimit(status int, retryAfter, body string) bool {
	ok := strings.Contains(body, `"code":-32000`) && strings.Contains(body, `"error":"rate_limited"`)
	if status != 0 {
		ok = ok && status == http.StatusTooManyRequests && retryAfter != ""
	}
	return ok
}

// TestTaskRequestsSpendTheRateLimit: tasks/get, tasks/result, tasks/list
// and tasks/cancel each spend one slot of the principal's rate limit, the
// budget tools/call spends, on stdio's fast front and over HTTP with the
// fast path and without; over the limit each gets the refusal a call gets
// (-32000 rate_limited; over HTTP 429 with Retry-After), audited as a
// call's, and the relay is not reached.
func TestTaskRequestsSpendTheRateLimit(t *testing.T) {
	for name, front := range taskFronts() {
		t.Run(name, func(t *testing.T) {
			relay, log := &countingTasks{}, &mcptest.AuditLog{}
			do := front(t, taskLimitServer(t, relay, 5, log))
			if _, _, b := do(t, taskReq(1, "tools/call", `{"name":"report","arguments":{"topic":"x"}}`)); !strings.Contains(b, "a report on x") {
				t.Fatalf("a plain call: %s", b)
			}
			allowed := []string{
				taskReq(2, "tasks/get", `{"taskId":"t-mine"}`),
				taskReq(3, "tasks/result", `{"taskId":"t-mine"}`),
				taskReq(4, "tasks/list", `{}`),
				taskReq(5, "tasks/cancel", `{"taskId":"t-mine"}`),
			}
			for _, line := range allowed {
				if st, ra, b := do(t, line); refusedByLimit(st, ra, b) || strings.Contains(b, `"error"`) {
					t.Fatalf("under the limit: %s -> %d %s", line, st, b)
				}
			}
			if got := relay.calls.Load(); got != 4 {
				t.Fatalf("relay calls under the limit: %d, want 4", got)
			}
			over := []string{
				taskReq(6, "tasks/get", `{"taskId":"t-mine"}`),
				taskReq(7, "tasks/result", `{"taskId":"t-mine"}`),
				taskReq(8, "tasks/list", `{}`),
				taskReq(9, "tasks/cancel", `{"taskId":"t-mine"}`),
				taskReq(10, "tasks/get", `{"taskId":7}`), // malformed: spends a slot as a call with bad arguments does
				taskReq(11, "tools/call", `{"name":"report","arguments":{"topic":"x"},"task":{}}`),
				taskReq(12, "tools/call", `{"name":"report","arguments":{"topic":"x"}}`),
			}
			for _, line := range over {
				if st, ra, b := do(t, line); !refusedByLimit(st, ra, b) {
					t.Errorf("over the limit: %s -> %d %q %s", line, st, ra, b)
				}
			}
			if got := relay.calls.Load(); got != 4 {
				t.Errorf("relay calls: %d, want 4: a refused task request reached the relay", got)
			}
			limited := map[string]int{}
			for _, r := range log.Records() {
				if r.Outcome == audit.RateLimited {
					limited[r.Tool]++
					if r.Principal != "local" || r.ErrorCode != string(kernel.RateLimited) {
						t.Errorf("refusal record: %+v", r)
					}
				}
			}
			want := map[string]int{"tasks/get": 2, "tasks/result": 1, "tasks/list": 1, "tasks/cancel": 1, "report": 2}
			if fmt.Sprint(limited) != fmt.Sprint(want) {
				t.Errorf("rate_limited records by tool: %v, want %v", limited, want)
			}
		})
	}
}

// TestTaskRequestsWithoutTheStdioFastFront: the go-sdk-only stdio path
// (DisableFastPath) routes no task request, so none reaches the relay
// and there is nothing to count: the go-sdk refuses them.
func TestTaskRequestsWithoutTheStdioFastFront(t *testing.T) {
	relay := &countingTasks{}
	c := newStdioRoundTrip(t, taskLimitServer(t, relay, 1000, audit.Discard), true)
	for i, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if b := c.do(t, taskReq(i+1, m, `{"taskId":"t-mine"}`)); !strings.Contains(b, `"error"`) {
			t.Errorf("%s without the fast front: %s", m, b)
		}
	}
	if got := relay.calls.Load(); got != 0 {
		t.Errorf("relay calls: %d, want 0", got)
	}
}

// TestTaskGetFloodIsCutByTheLimiter: a flood of tasks/get for bogus ids
// costs exactly the limit in relay calls (each one an upstream's round
// trip on the gateway); every request past it is refused before the relay.
func TestTaskGetFloodIsCutByTheLimiter(t *testing.T) {
	const limit, flood = 10, 200
	for name, front := range taskFronts() {
		t.Run(name, func(t *testing.T) {
			relay := &countingTasks{}
			do := front(t, taskLimitServer(t, relay, limit, audit.Discard))
			refused := 0
			for i := range flood {
				st, ra, b := do(t, taskReq(i+1, "tasks/get", fmt.Sprintf(`{"taskId":"bogus-%d"}`, i)))
				switch {
				case refusedByLimit(st, ra, b):
					refused++
				case i >= limit:
					t.Fatalf("request %d past the limit was answered: %s", i, b)
				case !strings.Contains(b, "Task not found"):
					t.Fatalf("request %d: %s", i, b)
				}
			}
			if got := relay.calls.Load(); got != limit || refused != flood-limit {
				t.Errorf("relay calls %d (want %d), refused %d (want %d)", got, limit, refused, flood-limit)
			}
		})
	}
}

// TestTaskCancelAndResultAreAudited: tasks/cancel and tasks/result each
// write one audit record (tool: the method; the principal; the outcome),
// tasks/get and tasks/list none. Another principal's id, an unknown id
// and an oversized one give the same record (not_found), as they give
// the same answer. A secret in everything the relay returned is in no
// record, and in no answer.
func TestTaskCancelAndResultAreAudited(t *testing.T) {
	for name, front := range taskFronts() {
		t.Run(name, func(t *testing.T) {
			relay, log := &countingTasks{}, &mcptest.AuditLog{}
			do := front(t, taskLimitServer(t, relay, 1000, log))
			type want struct {
				outcome audit.Outcome
				code    string
				status  string
			}
			notFound := want{audit.ToolError, string(kernel.NotFound), ""}
			steps := []struct {
				line string
				want *want // nil: no record
			}{
				{taskReq(1, "tasks/get", `{"taskId":"t-mine"}`), nil},
				{taskReq(2, "tasks/list", `{}`), nil},
				{taskReq(3, "tasks/cancel", `{"taskId":"t-mine"}`), &want{audit.OK, "", kernel.TaskCancelled}},
				{taskReq(4, "tasks/cancel", `{"taskId":"t-theirs"}`), &notFound},
				{taskReq(5, "tasks/cancel", `{"taskId":"t-never"}`), &notFound},
				{taskReq(6, "tasks/cancel", `{"taskId":"`+strings.Repeat("x", 300)+`"}`), &notFound},
				{taskReq(7, "tasks/cancel", `{"taskId":"t-done"}`), &want{audit.Refused, string(kernel.FailedPrecondition), ""}},
				{taskReq(8, "tasks/cancel", `{"taskId":7}`), &want{audit.ToolError, string(kernel.InvalidArgument), ""}},
				{taskReq(9, "tasks/result", `{"taskId":"t-mine"}`), &want{audit.OK, "", ""}},
				{taskReq(10, "tasks/result", `{"taskId":"t-failed"}`), &want{audit.ToolError, string(kernel.UpstreamError), ""}},
				{taskReq(11, "tasks/result", `{"taskId":"t-theirs"}`), &notFound},
				{taskReq(12, "tasks/result", `{"taskId":"t-never"}`), &notFound},
			}
			answers := map[int]string{}
			for i, step := range steps {
				before := len(log.Records())
				_, _, b := do(t, step.line)
				answers[i+1] = b
				if strings.Contains(b, taskSecret) {
					t.Errorf("the secret left in an answer: %s", b)
				}
				recs := log.Records()[before:]
				if step.want == nil {
					if len(recs) != 0 {
						t.Errorf("%s: records %+v, want none", step.line, recs)
					}
					continue
				}
				if len(recs) != 1 {
					t.Fatalf("%s: %d records, want 1: %+v", step.line, len(recs), recs)
				}
				r := recs[0]
				var req struct {
					Method string `json:"method"`
				}
				_ = json.Unmarshal([]byte(step.line), &req)
				if r.Tool != req.Method || r.Attrs["method"] != req.Method || r.Principal != "local" ||
					r.Outcome != step.want.outcome || r.ErrorCode != step.want.code || r.Attrs["status"] != step.want.status {
					t.Errorf("%s: record %+v, want %+v", step.line[:min(len(step.line), 80)], r, *step.want)
				}
			}
			// No oracle: another principal's id and one that never existed
			// get the same answer and the same record.
			same := func(a, b string) bool {
				var x, y struct{ Error, Result json.RawMessage }
				return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil &&
					x.Result == nil && y.Result == nil && len(x.Error) > 0 && string(x.Error) == string(y.Error)
			}
			if !same(answers[4], answers[5]) || !same(answers[11], answers[12]) {
				t.Errorf("another principal's id answers differently:\n%s\n%s\n%s\n%s", answers[4], answers[5], answers[11], answers[12])
			}
			var cancels []audit.Record
			for _, r := range log.Records() {
				if r.Tool == "tasks/cancel" && r.Outcome == audit.ToolError && r.ErrorCode == string(kernel.NotFound) {
					r.Time, r.Duration = time.Time{}, 0
					cancels = append(cancels, r)
				}
			}
			if len(cancels) != 3 || fmt.Sprint(cancels[0]) != fmt.Sprint(cancels[1]) || fmt.Sprint(cancels[1]) != fmt.Sprint(cancels[2]) {
				t.Errorf("not-found cancel records differ: %+v", cancels)
			}
			all, err := json.Marshal(log.Records())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(all), taskSecret) || strings.Contains(string(all), "t-mine") {
				t.Errorf("a secret or a task id in the audit: %s", all)
			}
		})
	}
}

// TestTaskRequestsUnderAStoreOutage: while the shared store that keeps the
// rate-limit windows is down, a task request is refused as a call is
// (-32001 store_unavailable; over HTTP 503) before the relay; with
// StoreOutage.ServeReads, tasks/get, tasks/result and tasks/list go on
// under the per-process limit, as read-only tools do, and tasks/cancel
// (a change upstream) stays refused.
func TestTaskRequestsUnderAStoreOutage(t *testing.T) {
	unavailable := func(status int, body string) bool {
		return strings.Contains(body, `"code":-32001`) && (status == 0 || status == http.StatusServiceUnavailable)
	}
	for name, front := range taskFronts() {
		for _, reads := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/serve_reads=%v", name, reads), func(t *testing.T) {
				relay, store := &countingTasks{}, newSwitchStore()
				do := front(t, taskLimitServerOn(t, relay, 1000, audit.Discard, store, kernel.StoreOutage{ServeReads: reads}, nil))
				store.down.Store(true)
				for i, m := range []string{"tasks/get", "tasks/result", "tasks/list"} {
					st, _, b := do(t, taskReq(i+1, m, `{"taskId":"t-mine"}`))
					if unavailable(st, b) == reads {
						t.Errorf("%s: %d %s", m, st, b)
					}
				}
				if st, _, b := do(t, taskReq(9, "tasks/cancel", `{"taskId":"t-mine"}`)); !unavailable(st, b) {
					t.Errorf("tasks/cancel: %d %s", st, b)
				}
				want := int64(0)
				if reads {
					want = 3
				}
				if got := relay.calls.Load(); got != want {
					t.Errorf("relay calls: %d, want %d", got, want)
				}
			})
		}
	}
}

// TestTaskRecordsCountUnderOther: the metrics count the audit records of
// task requests (an audited tasks/cancel and tasks/result, a tasks/get the
// limit refuses) under the tool label "other", with no duration: the label
// stays one of the registered tools or "other".
func TestTaskRecordsCountUnderOther(t *testing.T) {
	reg := prometheus.NewRegistry()
	obs, err := observe.New(&observe.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	c := newStdioRoundTrip(t, taskLimitServerOn(t, &countingTasks{}, 2, audit.Discard, nil, kernel.StoreOutage{}, obs), false)
	c.do(t, taskReq(1, "tasks/cancel", `{"taskId":"t-mine"}`))
	c.do(t, taskReq(2, "tasks/result", `{"taskId":"t-mine"}`))
	c.do(t, taskReq(3, "tasks/get", `{"taskId":"t-mine"}`))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetName() {
			case "bulwark_tool_calls_total":
				if v := m.GetCounter().GetValue(); v != 0 {
					got[labels["tool"]+"/"+labels["outcome"]] = v
				}
			case "bulwark_tool_call_duration_seconds":
				if n := m.GetHistogram().GetSampleCount(); n != 0 {
					got["duration/"+labels["tool"]] = float64(n)
				}
			}
		}
	}
	want := map[string]float64{"other/ok": 2, "other/rate_limited": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("series: %v, want %v", got, want)
	}
}
