package taint

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// taskSupport is a hostile upstream tool's execution.taskSupport.
func taskSupport(tool string) string {
	if tool == TaskTool {
		return "optional"
	}
	return "forbidden"
}

// taskObject is a Task whose every member is hostile but its status.
func (u *upstream) taskObject(status string) map[string]any {
	return map[string]any{"taskId": u.h("Task.taskId"), "status": status, "statusMessage": u.h("Task.statusMessage"),
		"createdAt": u.h("Task.createdAt"), "lastUpdatedAt": u.h("Task.lastUpdatedAt"), "ttl": 60000, "pollInterval": 10}
}

// createTask answers a task-augmented call, then tells the client the
// task's status in a notification.
func (u *upstream) createTask(m message) {
	u.result(m.ID, map[string]any{"task": u.taskObject("working"), "_meta": u.meta("CreateTaskResult._meta")})
	params := u.taskObject("working")
	params["_meta"] = u.meta("NotificationParams._meta")
	u.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": params})
}

// task answers tasks/get, tasks/list, tasks/cancel and tasks/result.
func (u *upstream) task(m message) {
	switch m.Method {
	case "tasks/get", "tasks/cancel":
		status := "completed"
		if m.Method == "tasks/cancel" {
			status = "cancelled"
		}
		t := u.taskObject(status)
		t["_meta"] = u.meta("Result._meta")
		u.result(m.ID, t)
	case "tasks/list":
		u.result(m.ID, map[string]any{"tasks": []any{u.taskObject("completed")}, "nextCursor": u.h("ListTasksResult.nextCursor"),
			"_meta": u.meta("ListTasksResult._meta")})
	case "tasks/result":
		u.result(m.ID, map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": u.h("TextContent.text")}},
			"structuredContent": map[string]any{"k": u.h("CallToolResult.structuredContent")},
			"_meta":             u.meta("GetTaskPayloadResult._meta")})
	}
}

// taskRequests are what a task client sends once its task is created (the
// id replaced), and a request for an id that is none.
var taskRequests = []struct{ method, params string }{
	{"tasks/get", `{"taskId":"ID"}`},
	{"tasks/list", `{}`},
	{"tasks/result", `{"taskId":"ID"}`},
	{"tasks/cancel", `{"taskId":"ID"}`},
	{"tasks/get", `{"taskId":"taint.no-such-task"}`},
}

// taskID reads the task id of a CreateTaskResult response.
func taskID(resp []byte) string {
	var r struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	_ = json.Unmarshal(resp, &r)
	return r.Result.Task.TaskID
}

// TasksOverStdio runs a raw 2025-11-25 client over OS pipes against
// ks.ServeStdio (the fast front answers tasks): it creates a task of
// "taint."+TaskTool, gets, lists, fetches, cancels it and asks for a bogus
// id, and checks every line it read with c.
func TasksOverStdio(t *testing.T, ks *kernel.Server, c *Checker) {
	t.Helper()
	inR, inW, outR, outW := stdioPipes(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ks.ServeStdio(ctx, inR, outW); outW.Close() }()
	var raw Buffer
	br := bufio.NewReaderSize(io.TeeReader(outR, &raw), 1<<20)
	n := 0
	call := func(method, params string) []byte {
		n++
		id := fmt.Sprint(n)
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, params)
		for {
			line, err := br.ReadBytes('\n')
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &m) == nil && string(m.ID) == id {
				return line
			}
			if err != nil {
				t.Errorf("stdio tasks: no answer to %s: %v", method, err)
				return nil
			}
		}
	}
	call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"taint","version":"1"}}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call("tools/list", `{}`)
	id := taskID(call("tools/call", `{"name":"taint.`+TaskTool+`","arguments":{},"task":{"ttl":60000}}`))
	if id == "" {
		t.Errorf("stdio tasks: no task created")
	}
	for _, r := range taskRequests {
		call(r.method, strings.ReplaceAll(r.params, "ID", id))
	}
	time.Sleep(50 * time.Millisecond) // a status notification would come by now
	inW.Close()
	cancel()
	<-done
	outR.Close()
	c.Lines(raw.Bytes())
}

// TasksOverHTTP is TasksOverStdio over Streamable HTTP, one POST a request.
func TasksOverHTTP(t *testing.T, ks *kernel.Server, c *Checker) {
	t.Helper()
	endpoint := mcptest.ServeHTTP(t, ks, kernel.HTTPOptions{})
	call := func(method, params string) []byte {
		resp, body := mcptest.Post(t, endpoint, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params),
			map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("http tasks: %s: %d", method, resp.StatusCode)
		}
		c.Body(resp.Header.Get("Content-Type"), []byte(body))
		return []byte(body)
	}
	call("tools/list", `{}`)
	id := taskID(call("tools/call", `{"name":"taint.`+TaskTool+`","arguments":{},"task":{}}`))
	if id == "" {
		t.Errorf("http tasks: no task created")
	}
	for _, r := range taskRequests {
		call(r.method, strings.ReplaceAll(r.params, "ID", id))
	}
}
