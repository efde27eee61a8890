package kernel

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
)

// taskSeeds are task requests as clients write them, and hostile ones.
var taskSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a.b","arguments":{},"task":{"ttl":60000}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a.b","arguments":{"x":1},"task":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a.b","task":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a.b","task":{"ttl":-5}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a.b","task":{"ttl":1e3}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"task":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a.b","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":"x","method":"tasks/get","params":{"taskId":"a.AAAAAAAAAAAAAAAAAAAAAA"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"\ud800"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":""}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":["a"]}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tasks/list"}`,
	`{"jsonrpc":"2.0","id":3,"method":"tasks/list","params":{"cursor":"c"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tasks/list","params":{"cursor":{}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"` + strings.Repeat("x", 300) + `"}}`,
	`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","task":{"ttl":1,"x":` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"p","task":{}}}`,
}

// FuzzParseTaskRequest: the parser of task requests never panics on a
// message the guards accept; it takes only the task methods (tools/call
// only with params.task); what it reads is within bounds: a task id it
// keeps is valid UTF-8 of at most maxTaskID bytes, a ttl is not negative,
// a tools/call has a name; and its error is always -32602.
func FuzzParseTaskRequest(f *testing.F) {
	for _, s := range taskSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		env, err := httpguard.ParseMessage(msg)
		if err != nil {
			return
		}
		tr, ok, rpcErr := parseTaskRequest(env.Method, msg)
		if !ok {
			if rpcErr != nil {
				t.Fatalf("an error for a message that is not a task request: %v", rpcErr)
			}
			return
		}
		if !isTaskMethod(env.Method) || tr.method != env.Method {
			t.Fatalf("took %q as %q", env.Method, tr.method)
		}
		if rpcErr != nil {
			if rpcErr.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("error code %d", rpcErr.Code)
			}
			return
		}
		if len(tr.taskID) > maxTaskID || !utf8.ValidString(tr.taskID) {
			t.Fatalf("task id kept: %q", tr.taskID)
		}
		if tr.task.TTL != nil && *tr.task.TTL < 0 {
			t.Fatalf("negative ttl %d", *tr.task.TTL)
		}
		if tr.method == "tools/call" && tr.name == "" {
			t.Fatal("a task-augmented call without a name")
		}
	})
}

// TestEncodeTaskBoundsTheStatusMessage: a status message is cleaned and
// cut at maxStatusMessage on a rune boundary; a status 2025-11-25 does not
// define is refused.
func TestEncodeTaskBoundsTheStatusMessage(t *testing.T) {
	b, err := encodeTask(Task{TaskID: "a.b", Status: TaskWorking, StatusMessage: strings.Repeat("é", 2000) + "\u202e"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxStatusMessage+200 || !utf8.Valid(b) || strings.Contains(string(b), "\u202e") {
		t.Fatalf("%d bytes: %.80s", len(b), b)
	}
	if !strings.Contains(string(b), `"ttl":null`) {
		t.Errorf("an unlimited ttl is not null: %s", b)
	}
	if _, err := encodeTask(Task{TaskID: "a.b", Status: "paused"}); err == nil {
		t.Error("a status outside 2025-11-25 was encoded")
	}
}
