package kernel

// Tasks (MCP 2025-11-25, "basic/utilities/tasks"): a client may augment a
// tools/call with params.task, get a task handle back at once, and poll it
// with tasks/get, fetch the outcome with tasks/result, list its tasks with
// tasks/list and cancel one with tasks/cancel.
//
// The go-sdk does not model tasks: it refuses tasks/* before any
// middleware and drops params.task. So the kernel answers these requests
// where it reads raw JSON-RPC, ahead of the go-sdk: the stdio front
// (fastpath_stdio.go, answersTask) and the HTTP endpoint (tasksHTTP, between
// admission and the go-sdk's handler). A task-augmented call runs the
// same steps as any call — admission (tier, rate limit), the capability
// check, validation, authorization, the confirmation gate, the handler,
// the audit record — with the Call marked (Call.Task); only the handler's
// answer differs: a TaskCreated value instead of a result. Each tasks/*
// request spends the principal's rate limit as a call does (answerTask),
// and tasks/cancel and tasks/result are audited (serveTask). The embedder
// (Options.Tasks, a TaskRelay) owns the tasks: where they run, which
// principal each belongs to, how long it is kept. Everything the client
// receives is built by the kernel from typed values (Task, a tool result
// shaped like the tool's own) and leaves through the egress gate.
//
// Tasks exist in 2025-11-25 only: 2026-07-28 moved them out of the core
// protocol into an extension (io.modelcontextprotocol/tasks) with another
// shape (resultType "task", tasks/update), which the kernel does not
// serve. So the tasks capability is declared, the task-capable tools show
// execution.taskSupport, and the task requests are answered only to a
// 2025-11-25 client on a front that routes them (HTTP, and the stdio fast
// front; not the go-sdk-only stdio path of StdioOptions.DisableFastPath);
// tools that can only run as tasks are left out of every other client's
// tools/list (tasksMiddleware).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// TaskVersion is the protocol version whose clients can use tasks.
const TaskVersion = "2025-11-25"

// A tool's execution.taskSupport (Tool.TaskSupport).
const (
	TaskOptional = "optional"
	TaskRequired = "required"
)

// The task statuses of 2025-11-25.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// ErrNoTask is the error a TaskRelay returns for a task id it does not
// hold for the caller — unknown, expired, or another principal's: the
// client gets the same -32602 for each, so no answer tells them apart.
var ErrNoTask = errors.New("task not found")

// maxStatusMessage bounds a task's statusMessage, in bytes.
const maxStatusMessage = 1024

// maxTaskID bounds a task id in a request; longer ids are no task's.
const maxTaskID = 256

// TaskCapability is the tasks capability a TaskRelay offers: tools/call
// augmentation always, tasks/list and tasks/cancel when set.
type TaskCapability struct {
	List, Cancel bool
}

// Task is a task as a client sees it (2025-11-25's Task). The kernel
// writes it: it checks the status, cleans and bounds StatusMessage (an
// upstream's text), and writes ttl as null when TTL is nil (unlimited).
type Task struct {
	TaskID        string
	Status        string
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	TTL           *int64 // milliseconds; nil: unlimited
	PollInterval  *int64 // milliseconds; nil: not said
}

// TaskParams is what a task-augmented call asked for (params.task).
type TaskParams struct {
	TTL *int64 // requested milliseconds; nil when not given
}

// TaskCreated is what a tool handler returns for a task-augmented call
// (Call.Task) when it created the task: the client receives it as the
// call's CreateTaskResult. Returned for a call that is not
// task-augmented, it is an internal error.
type TaskCreated struct{ Task Task }

// TaskOutcome is what tasks/result answers: the task's tool result.
// Result, when set, is a result the kernel shaped already (TaskRelay's
// Refused); otherwise Out and Err are a handler's value and error, shaped
// as the tool's own would be (the envelope, a tool error).
type TaskOutcome struct {
	Tool   string
	Out    any
	Err    error
	Result *mcp.CallToolResult
}

// TaskRelay serves the tasks of a server whose tools create them
// (Options.Tasks). Every method gets the caller's principal: a relay must
// answer ErrNoTask for a task another principal created.
type TaskRelay interface {
	// TaskCapability is the capability to declare to 2025-11-25 clients,
	// or nil for none (then no task request is answered, and tools that
	// can only run as tasks are listed to no one).
	TaskCapability() *TaskCapability
	// Refused records a task for a task-augmented call the kernel answered
	// itself before any task was created (a validation error, a refused
	// authorization or confirmation): the task is failed and its result is
	// res. A client asked for a task, so it gets one.
	Refused(ctx context.Context, p identity.Principal, tool string, res *mcp.CallToolResult) (Task, error)
	Get(ctx context.Context, p identity.Principal, id string) (Task, error)
	Result(ctx context.Context, p identity.Principal, id string) (TaskOutcome, error)
	// List returns the caller's tasks from cursor ("" for the first
	// page), and the next page's cursor ("" for none).
	List(ctx context.Context, p identity.Principal, cursor string) ([]Task, string, error)
	Cancel(ctx context.Context, p identity.Principal, id string) (Task, error)
}

// TaskSupport declares the tool's execution.taskSupport (TaskOptional or
// TaskRequired): shown in tools/list to 2025-11-25 clients when
// Options.Tasks offers tasks. A required tool is listed to no other client.
func (t Tool) TaskSupport(mode string) Tool {
	switch mode {
	case "", TaskOptional, TaskRequired:
		t.taskSupport = mode
	default:
		if t.err == nil {
			t.err = fmt.Errorf("tool %s: unknown task support %q", t.name, mode)
		}
	}
	return t
}

// Task reports whether the call is task-augmented, and what it asked for.
func (c *Call) Task() (TaskParams, bool) {
	if c.task == nil {
		return TaskParams{}, false
	}
	return c.task.params, true
}

// taskCall marks a task-augmented call's context; the tool layer records
// there the task the handler created.
type taskCall struct {
	params  TaskParams
	created *Task
}

type taskCallKey struct{}

func taskCallFrom(ctx context.Context) *taskCall {
	tc, _ := ctx.Value(taskCallKey{}).(*taskCall)
	return tc
}

// tasksOffered is the relay's capability, nil when the server has no relay
// or it offers none.
func (s *Server) tasksOffered() *TaskCapability {
	if s.opts.Tasks == nil {
		return nil
	}
	return s.opts.Tasks.TaskCapability()
}

// taskSessions holds the stdio sessions whose front routes task requests
// (the fast front): the middleware declares tasks only to those, and to
// HTTP requests.
type taskSessions struct{ m sync.Map } // *mcp.ServerSession -> struct{}

// tasksRouted reports whether req came through a front that answers task
// requests: an HTTP request (the go-sdk gives it the request's headers) or
// a session of the stdio fast front.
func (s *Server) tasksRouted(req mcp.Request) bool {
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		return true
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return false
	}
	_, ok = s.taskSess.m.Load(ss)
	return ok
}

// requestVersion is the protocol version a request's session speaks (a
// stateless HTTP request's: its header's), "" when unknown.
func requestVersion(req mcp.Request) string {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// tasksMiddleware tells the truth about tasks in the go-sdk's answers: the
// tasks capability in initialize, and execution.taskSupport in tools/list,
// for a 2025-11-25 client on a front that routes task requests; for every
// other client, tools that can only run as tasks are not listed (it could
// not call them).
func (s *Server) tasksMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || (method != "initialize" && method != "tools/list") {
			return res, err
		}
		offered := s.tasksOffered()
		switch r := res.(type) {
		case *mcp.InitializeResult:
			if offered == nil || r.ProtocolVersion != TaskVersion || !s.tasksRouted(req) {
				return res, nil
			}
			return withTaskCapability(r, offered)
		case *mcp.ListToolsResult:
			if !s.taskTools.Load() {
				return res, nil // no tool declares task support: nothing to add or hide
			}
			on := offered != nil && requestVersion(req) == TaskVersion && s.tasksRouted(req)
			return s.taskToolList(r, on)
		}
		return res, nil
	}
}

// rawResult is a result the kernel encoded itself.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// withTaskCapability is the initialize result with capabilities.tasks.
func withTaskCapability(r *mcp.InitializeResult, c *TaskCapability) (mcp.Result, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var caps map[string]any
	if err := json.Unmarshal(m["capabilities"], &caps); err != nil || caps == nil {
		caps = map[string]any{}
	}
	tasks := map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	if c.List {
		tasks["list"] = map[string]any{}
	}
	if c.Cancel {
		tasks["cancel"] = map[string]any{}
	}
	caps["tasks"] = tasks
	if m["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &rawResult{raw: raw}, nil
}

// taskToolList is a tools/list result as a client sees it: with on, each
// task-capable tool carries execution.taskSupport; without, the tools that
// can only run as tasks are left out.
func (s *Server) taskToolList(r *mcp.ListToolsResult, on bool) (mcp.Result, error) {
	support := map[string]string{}
	for _, t := range r.Tools {
		if st, ok := s.lookup(t.Name); ok && st.taskSupport != "" {
			support[t.Name] = st.taskSupport
		}
	}
	if len(support) == 0 {
		return r, nil
	}
	if !on {
		out := *r
		out.Tools = make([]*mcp.Tool, 0, len(r.Tools))
		for _, t := range r.Tools {
			if support[t.Name] != TaskRequired {
				out.Tools = append(out.Tools, t)
			}
		}
		return &out, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(m["tools"], &tools); err != nil {
		return nil, err
	}
	for _, t := range tools {
		var name string
		_ = json.Unmarshal(t["name"], &name)
		if mode := support[name]; mode != "" {
			t["execution"] = json.RawMessage(`{"taskSupport":` + strconv.Quote(mode) + `}`)
		}
	}
	if m["tools"], err = json.Marshal(tools); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &rawResult{raw: raw}, nil
}

// taskRequest is a task request as read off the wire (parseTaskRequest).
type taskRequest struct {
	method string
	taskID string // tasks/get, tasks/result, tasks/cancel
	cursor string // tasks/list
	// a task-augmented tools/call
	name string
	args json.RawMessage
	task TaskParams
}

// invalidTaskParams is the -32602 of a task request whose params are
// not what 2025-11-25 defines.
func invalidTaskParams(why string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + why}
}

// isTaskMethod reports whether a method is a task request the kernel
// answers (tools/call only when parseTaskRequest finds params.task).
func isTaskMethod(method string) bool {
	switch method {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tools/call":
		return true
	}
	return false
}

// parseTaskRequest reads a task request's params from a JSON-RPC message
// already checked by httpguard.ParseMessage (one object, bounded nesting
// and size). ok is false for a tools/call without params.task (not a task
// request: the usual path answers it) and for a method that is not a task
// request. A malformed task request is ok with a -32602 error.
func parseTaskRequest(method string, msg []byte) (tr taskRequest, ok bool, rpcErr *jsonrpc.Error) {
	if !isTaskMethod(method) {
		return taskRequest{}, false, nil
	}
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return taskRequest{}, false, nil // not one the kernel vouches for: the usual path
	}
	var p map[string]json.RawMessage
	if len(m.Params) > 0 && !bytes.Equal(m.Params, []byte("null")) {
		if json.Unmarshal(m.Params, &p) != nil {
			return taskRequest{}, false, nil
		}
	}
	tr.method = method
	switch method {
	case "tools/call":
		raw, has := p["task"]
		if !has {
			return taskRequest{}, false, nil
		}
		var task map[string]json.RawMessage
		if json.Unmarshal(raw, &task) != nil || task == nil {
			return tr, true, invalidTaskParams("params.task must be an object")
		}
		if ttl, has := task["ttl"]; has && !bytes.Equal(ttl, []byte("null")) {
			n, err := strconv.ParseInt(string(ttl), 10, 64)
			if err != nil || n < 0 {
				return tr, true, invalidTaskParams("params.task.ttl must be a non-negative integer of milliseconds")
			}
			tr.task.TTL = &n
		}
		if json.Unmarshal(p["name"], &tr.name) != nil || tr.name == "" {
			return tr, true, invalidTaskParams("params.name must be a tool's name")
		}
		tr.args = p["arguments"]
	case "tasks/list":
		if c, has := p["cursor"]; has && json.Unmarshal(c, &tr.cursor) != nil {
			return tr, true, invalidTaskParams("params.cursor must be a string")
		}
	default:
		if json.Unmarshal(p["taskId"], &tr.taskID) != nil || tr.taskID == "" {
			return tr, true, invalidTaskParams("params.taskId must be a string")
		}
		if len(tr.taskID) > maxTaskID || !utf8.ValidString(tr.taskID) {
			tr.taskID = "" // no task has such an id: not found
		}
	}
	return tr, true, nil
}

// taskNotFound is the answer for a task the caller does not hold.
var taskNotFound = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}

// taskRefused is a task request refused at admission (the rate limit, a
// store outage): the JSON-RPC error a refused call gets, which tasksHTTP
// sends with the call's HTTP status and Retry-After.
type taskRefused struct{ a admission }

func (e *taskRefused) Error() string { return e.a.refusal.Message }
func (e *taskRefused) Unwrap() error { return (*jsonrpc.Error)(e.a.refusal) }

// answerTask answers one task request read off the wire, on either front
// (answersTask on stdio, tasksHTTP): step 10 first, then serveTask. A
// tasks/* request spends the principal's rate limit as a call does
// (admitTask), before anything reaches the relay; a refusal is audited as
// a refused call's (refusalRecord, its tool the method). A task-augmented
// tools/call is admitted as a call — by the HTTP layer, or by admitCall in
// taskCall — except one whose params are malformed, which never reaches
// admitCall: on stdio it is admitted here. perr is parseTaskRequest's
// error, answered once admitted.
func (s *Server) answerTask(ctx context.Context, tr taskRequest, perr *jsonrpc.Error, sess *mcp.ServerSession, extra *mcp.RequestExtra) (json.RawMessage, error) {
	p := principalFrom(ctx, &mcp.CallToolRequest{Extra: extra})
	if hs := httpScopeFrom(ctx); tr.method != "tools/call" || (perr != nil && (hs == nil || !hs.admitted)) {
		if a := s.admitTask(ctx, p, tr.method); a.refusal != nil {
			s.audit.Write(ctx, s.refusalRecord(p, tr.method, networkFrom(ctx), a))
			return nil, &taskRefused{a}
		}
	}
	if perr != nil {
		if tr.method == "tasks/cancel" {
			rec := s.taskRecord(ctx, p, tr.method)
			rec.Outcome, rec.ErrorCode = audit.ToolError, string(InvalidArgument)
			s.writeTaskRecord(ctx, p, extra, rec)
		}
		return nil, perr
	}
	return s.serveTask(ctx, tr, p, sess, extra)
}

// serveTask answers one admitted task request with its encoded result, or
// a JSON-RPC error. sess is the go-sdk's session of a stdio client (nil
// over HTTP), extra the HTTP request's.
//
// tasks/cancel (it changes an upstream's state) and tasks/result (it hands
// a tool's result to the client) are audited, one record each
// (taskRecord); tasks/get and tasks/list only read a task's status, which
// a client polls at its pollInterval: they are not, as tools/list is not
// (docs/gateway.md, Tasks). The rate limit bounds all four.
func (s *Server) serveTask(ctx context.Context, tr taskRequest, p identity.Principal, sess *mcp.ServerSession, extra *mcp.RequestExtra) (json.RawMessage, error) {
	relay := s.opts.Tasks
	switch tr.method {
	case "tools/call":
		return s.taskCall(ctx, tr, p, sess, extra)
	case "tasks/list":
		tasks, next, err := relay.List(ctx, p, tr.cursor)
		if err != nil {
			return nil, s.taskError(ctx, err, nil)
		}
		return encodeTaskList(tasks, next)
	case "tasks/get":
		if tr.taskID == "" {
			return nil, taskNotFound
		}
		t, err := relay.Get(ctx, p, tr.taskID)
		if err != nil {
			return nil, s.taskError(ctx, err, nil)
		}
		return encodeTask(t)
	case "tasks/cancel":
		rec := s.taskRecord(ctx, p, tr.method)
		b, err := s.cancelTask(ctx, tr.taskID, p, &rec)
		s.writeTaskRecord(ctx, p, extra, rec)
		return b, err
	case "tasks/result":
		rec := s.taskRecord(ctx, p, tr.method)
		b, err := s.taskResult(ctx, tr.taskID, p, &rec)
		s.writeTaskRecord(ctx, p, extra, rec)
		return b, err
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", tr.method)}
}

// cancelTask answers tasks/cancel, recording how it ended in rec.
func (s *Server) cancelTask(ctx context.Context, id string, p identity.Principal, rec *audit.Record) (json.RawMessage, error) {
	relay := s.opts.Tasks
	if c := relay.TaskCapability(); c == nil || !c.Cancel {
		rec.Outcome, rec.ErrorCode = audit.Refused, string(FailedPrecondition)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: `method "tasks/cancel" not found`}
	}
	if id == "" {
		return nil, s.taskError(ctx, ErrNoTask, rec)
	}
	t, err := relay.Cancel(ctx, p, id)
	if err != nil {
		return nil, s.taskError(ctx, err, rec)
	}
	b, err := encodeTask(t)
	if err != nil {
		rec.Outcome, rec.ErrorCode = audit.Internal, string(Internal)
		return nil, err
	}
	rec.Attrs["status"] = t.Status // one of the five: encodeTask checked it
	return b, nil
}

// taskResult answers tasks/result, recording how it ended in rec: ok, or
// the tool error the result is.
func (s *Server) taskResult(ctx context.Context, id string, p identity.Principal, rec *audit.Record) (json.RawMessage, error) {
	if id == "" {
		return nil, s.taskError(ctx, ErrNoTask, rec)
	}
	o, err := s.opts.Tasks.Result(ctx, p, id)
	if err != nil {
		return nil, s.taskError(ctx, err, rec)
	}
	var res mcp.CallToolResult // a copy: a relay's stored result is shared by every tasks/result
	if o.Result != nil {
		res = *o.Result
		if res.IsError {
			rec.Outcome, rec.ErrorCode = audit.ToolError, resultErrorCode(&res)
		}
	} else {
		res = *s.taskToolResult(ctx, p, o, rec)
	}
	meta := make(mcp.Meta, len(res.Meta)+1)
	maps.Copy(meta, res.Meta)
	meta["io.modelcontextprotocol/related-task"] = map[string]any{"taskId": id}
	res.Meta = meta
	rec.BytesOut = resultSize(&res)
	return json.Marshal(fastToolResult(&res, false))
}

// resultErrorCode is the code of a tool error the kernel shaped
// (errorResult's structured error), "" when it has none.
func resultErrorCode(res *mcp.CallToolResult) string {
	m, _ := res.StructuredContent.(map[string]any)
	e, _ := m["error"].(map[string]any)
	switch c := e["code"].(type) {
	case Code:
		return string(c)
	case string:
		return c
	}
	return ""
}

// taskRecord starts the audit record of a task request: its tool is the
// method, as completion/complete's is. It never holds the task id: the
// record of another principal's id is the record of an id that never
// existed (ErrNoTask, not_found), as the answer is.
func (s *Server) taskRecord(ctx context.Context, p identity.Principal, method string) audit.Record {
	return audit.Record{Time: s.opts.Now(), Principal: p.ID, Plan: p.Plan, Scheme: p.Scheme, Network: networkFrom(ctx),
		Tool: method, Attrs: map[string]string{"method": method}, Outcome: audit.OK}
}

// writeTaskRecord scrubs rec of the request's secrets, as every record
// (scrubRecord), and writes it.
func (s *Server) writeTaskRecord(ctx context.Context, p identity.Principal, extra *mcp.RequestExtra, rec audit.Record) {
	call := &Call{Principal: p, Tool: rec.Tool, server: s, scope: s.scopeFor(ctx)}
	if extra != nil {
		call.header = extra.Header
	}
	scrubRecord(s.callSecrets(call), &rec)
	rec.Duration = s.opts.Now().Sub(rec.Time)
	s.audit.Write(ctx, rec)
}

// taskError is the JSON-RPC error for a relay's error: ErrNoTask and a
// *jsonrpc.Error as they are, anything else internal (logged). rec, when
// not nil, gets the outcome: not_found for ErrNoTask (an unknown id and
// another principal's alike), refused for the relay's invalid-params or
// method-not-found error (a task already finished, an upstream's
// refusal), internal otherwise.
func (s *Server) taskError(ctx context.Context, err error, rec *audit.Record) error {
	if rec == nil {
		rec = &audit.Record{}
	}
	var rpc *jsonrpc.Error
	switch {
	case errors.Is(err, ErrNoTask):
		rec.Outcome, rec.ErrorCode = audit.ToolError, string(NotFound)
		return taskNotFound
	case errors.As(err, &rpc):
		rec.Outcome, rec.ErrorCode = audit.Internal, string(Internal)
		if rpc.Code == jsonrpc.CodeInvalidParams || rpc.Code == jsonrpc.CodeMethodNotFound {
			rec.Outcome, rec.ErrorCode = audit.Refused, string(FailedPrecondition)
		}
		return rpc
	}
	id := newErrorID()
	rec.Outcome, rec.ErrorCode, rec.ErrorID = audit.Internal, string(Internal), id
	s.logger.ErrorContext(ctx, "task request failed", "error_id", id, "error", scrubText(s.secrets.get(), err.Error()))
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error (error id " + id + ")"}
}

// taskToolResult shapes a task's outcome as the tool's own result would
// be; rec gets the tool error's outcome.
func (s *Server) taskToolResult(ctx context.Context, p identity.Principal, o TaskOutcome, rec *audit.Record) *mcp.CallToolResult {
	call := &Call{Principal: p, Tool: o.Tool, server: s, scope: s.scopeFor(ctx)}
	call.secrets = s.callSecrets(call)
	if o.Err != nil {
		return s.fail(ctx, call, rec, o.Err)
	}
	res, err := s.shape(o.Out)
	if err != nil {
		return s.fail(ctx, call, rec, err)
	}
	return res
}

// taskCall runs a task-augmented tools/call through the whole pipeline.
func (s *Server) taskCall(ctx context.Context, tr taskRequest, p identity.Principal, sess *mcp.ServerSession, extra *mcp.RequestExtra) (json.RawMessage, error) {
	s.fast.mu.RLock()
	h, known := s.fast.handlers[tr.name]
	s.fast.mu.RUnlock()
	s.dyn.mu.RLock()
	why := s.dyn.withdrawn[tr.name]
	s.dyn.mu.RUnlock()
	t, registered := s.lookup(tr.name)
	req := &mcp.CallToolRequest{Session: sess, Params: &mcp.CallToolParamsRaw{Name: tr.name, Arguments: tr.args}, Extra: extra}
	var res *mcp.CallToolResult
	tc := &taskCall{params: tr.task}
	switch {
	case why != nil:
		res = s.errorResult(s.withdrawnRefusal(ctx, req, tr.name, why), "")
	case !known || !registered:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", tr.name)}
	case t.taskSupport == "":
		// The tool cannot run as a task: 2025-11-25 says a receiver
		// answers -32601 for a task it cannot create.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("tool %q does not support task-augmented execution", tr.name)}
	default:
		if missing := missingClient(t.requires, req.ClientCapabilities()); missing != nil {
			return nil, missing
		}
		cctx := context.WithValue(ctx, taskCallKey{}, tc)
		var err error
		var answered bool
		res, err, answered = s.admitCall(cctx, req)
		if !answered {
			res, err = h(cctx, req)
		}
		if err != nil {
			return nil, err // admission's refusal, a refused requestState
		}
	}
	var task Task
	if tc.created != nil {
		task = *tc.created
	} else {
		var err error
		if task, err = s.opts.Tasks.Refused(ctx, p, tr.name, res); err != nil {
			return nil, s.taskError(ctx, err, nil)
		}
	}
	b, err := encodeTask(task)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"task":`), b...), '}'), nil
}

// encodeTask writes a Task as 2025-11-25 defines it.
func encodeTask(t Task) (json.RawMessage, error) {
	switch t.Status {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
	default:
		return nil, fmt.Errorf("task %q: status %q is not one of 2025-11-25", t.TaskID, t.Status)
	}
	w := struct {
		TaskID        string `json:"taskId"`
		Status        string `json:"status"`
		StatusMessage string `json:"statusMessage,omitempty"`
		CreatedAt     string `json:"createdAt"`
		LastUpdatedAt string `json:"lastUpdatedAt"`
		TTL           *int64 `json:"ttl"`
		PollInterval  *int64 `json:"pollInterval,omitempty"`
	}{TaskID: t.TaskID, Status: t.Status, StatusMessage: boundText(clean(t.StatusMessage), maxStatusMessage),
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.LastUpdatedAt.UTC().Format(time.RFC3339Nano),
		TTL: t.TTL, PollInterval: t.PollInterval}
	return json.Marshal(&w)
}

// encodeTaskList writes a tasks/list result.
func encodeTaskList(tasks []Task, next string) (json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(tasks))
	for _, t := range tasks {
		b, err := encodeTask(t)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	w := struct {
		Tasks      []json.RawMessage `json:"tasks"`
		NextCursor string            `json:"nextCursor,omitempty"`
	}{out, next}
	return json.Marshal(&w)
}

// boundText cuts s to at most n bytes, on a rune boundary, marking the cut.
func boundText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	return s[:untrusted.CutIndex(s, n-len(mark))] + mark
}

// taskRequestHTTP reports whether an HTTP request is one the kernel answers
// as a task request when its method is one: a request (not a response or a
// notification) of a 2025-11-25 client, to a server whose relay offers
// tasks.
func (s *Server) taskRequestHTTP(env httpguard.Message, r *http.Request) bool {
	return !env.Response && env.ID != nil && env.ProtocolVersion == "" &&
		r.Header.Get("Mcp-Protocol-Version") == TaskVersion && s.tasksOffered() != nil
}

// tasksHTTP answers the task requests of 2025-11-25 clients over HTTP,
// ahead of the go-sdk's handler (which refuses tasks/* and would run a
// task-augmented call as a plain one), with or without the fast path.
// Admission ran before it. A request rule of the fast paths
// (docs/architecture.md).
func (s *Server) tasksHTTP(next http.Handler) http.Handler {
	if s.opts.Tasks == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env, err := httpguard.RequestMessage(r)
		if err != nil || !isTaskMethod(env.Method) || (env.Method == "tools/call" && !env.OtherParams) || !s.taskRequestHTTP(env, r) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			httpguard.WriteError(w, http.StatusBadRequest, env.ID, -32700, "could not read the body", nil)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		tr, ok, perr := parseTaskRequest(env.Method, body)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		res, err := s.answerTask(ctx, tr, perr, nil, &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(ctx), Header: r.Header})
		if err != nil {
			if ref, ok := errors.AsType[*taskRefused](err); ok {
				writeRefusal(w, env.ID, ref.a) // as the HTTP layer refuses a call (admission)
				return
			}
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) {
				rpc = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
			}
			httpguard.WriteError(w, http.StatusOK, env.ID, int(rpc.Code), rpc.Message, rpc.Data)
			return
		}
		writeFast(w, env.ID, func(b []byte) ([]byte, error) { return append(b, res...), nil })
	})
}
