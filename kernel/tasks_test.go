package kernel_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// memTasks is the smallest TaskRelay: tasks that end at once, bound to
// their principal.
type memTasks struct {
	mu    sync.Mutex
	owner map[string]string
	out   map[string]string
}

func (m *memTasks) TaskCapability() *kernel.TaskCapability { return &kernel.TaskCapability{List: true} }

func (m *memTasks) task(id, status string) kernel.Task {
	now := time.Unix(1_800_000_000, 0)
	return kernel.Task{TaskID: id, Status: status, CreatedAt: now, LastUpdatedAt: now}
}

func (m *memTasks) Refused(_ context.Context, p identity.Principal, _ string, _ *mcp.CallToolResult) (kernel.Task, error) {
	return m.task("refused", kernel.TaskFailed), nil
}

func (m *memTasks) get(p identity.Principal, id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.owner[id] == p.ID && p.ID != ""
}

func (m *memTasks) Get(_ context.Context, p identity.Principal, id string) (kernel.Task, error) {
	if !m.get(p, id) {
		return kernel.Task{}, kernel.ErrNoTask
	}
	return m.task(id, kernel.TaskCompleted), nil
}

func (m *memTasks) Result(_ context.Context, p identity.Principal, id string) (kernel.TaskOutcome, error) {
	if !m.get(p, id) {
		return kernel.TaskOutcome{}, kernel.ErrNoTask
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return kernel.TaskOutcome{Tool: "report", Out: m.out[id]}, nil
}

func (m *memTasks) List(_ context.Context, p identity.Principal, _ string) ([]kernel.Task, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []kernel.Task
	for id, o := range m.owner {
		if o == p.ID {
			out = append(out, m.task(id, kernel.TaskCompleted))
		}
	}
	return out, "", nil
}

func (m *memTasks) Cancel(context.Context, identity.Principal, string) (kernel.Task, error) {
	return kernel.Task{}, kernel.ErrNoTask
}

// TestTasksOnAStaticServer: the kernel's task hook serves any server, on
// the HTTP fast path too: a task-only tool is listed with its task support
// to 2025-11-25 and hidden from 2025-06-18; a task-augmented call runs the
// tool's handler, which sees Call.Task, with the principal; tasks/result is
// shaped as the tool's result (enveloped).
func TestTasksOnAStaticServer(t *testing.T) {
	relay := &memTasks{owner: map[string]string{}, out: map[string]string{}}
	tool := reportTool(t, relay)
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool}, &kernel.Options{Tasks: relay})
	if err != nil {
		t.Fatal(err)
	}
	url := mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{})
	post := func(version, body string) string {
		_, b := mcptest.Post(t, url, body, map[string]string{"Mcp-Protocol-Version": version})
		return b
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	if b := post("2025-11-25", list); !strings.Contains(b, `"execution":{"taskSupport":"required"}`) {
		t.Errorf("2025-11-25 tools/list: %s", b)
	}
	if b := post("2025-06-18", list); strings.Contains(b, `"report"`) {
		t.Errorf("2025-06-18 tools/list shows a task-only tool: %s", b)
	}
	if b := post("2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"report","arguments":{"topic":"x"}}}`); !strings.Contains(b, "runs only as a task") {
		t.Errorf("a plain call: %s", b)
	}
	b := post("2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"report","arguments":{"topic":"x"},"task":{}}}`)
	if !strings.Contains(b, `"task":{"taskId":"t-x","status":"working"`) {
		t.Fatalf("task call: %s", b)
	}
	if b := post("2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"t-x"}}`); !strings.Contains(b, `untrusted-data`) || !strings.Contains(b, "report on x") {
		t.Errorf("tasks/result: %s", b)
	}
	if b := post("2025-11-25", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"report","arguments":{"topic":7},"task":{}}}`); !strings.Contains(b, `"taskId":"refused","status":"failed"`) {
		t.Errorf("invalid arguments as a task: %s", b)
	}
	if b := post("2025-11-25", `{"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"taskId":"t-x"}}`); !strings.Contains(b, "-32601") {
		t.Errorf("tasks/cancel without the capability: %s", b)
	}
}
