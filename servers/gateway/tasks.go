package gateway

// Tasks (MCP 2025-11-25) relayed: the kernel answers the task requests
// where it reads raw JSON-RPC (kernel/tasks.go) and runs a task-augmented
// call through every control a call has; the gateway is its TaskRelay.
//
// A task-augmented call is sent to the upstream with params.task, on the
// gateway's own connection to a stdio child (rawcall.go's stdioConn) or
// posted on a URL upstream's session (httptask.go's httpConn): the go-sdk's
// client session cannot send it. Both are a taskConn; the relay is one. The upstream's task id never
// reaches the client: the gateway gives the task an id of its own, the
// upstream's prefix and 128 random bits ("ev.9sQ…"), and records which
// principal created it. Every later request names that id, and is answered
// only for that principal: another principal's tasks/get, tasks/result or
// tasks/cancel of it gets the -32602 "not found" an unknown id gets, and
// tasks/list lists only the caller's tasks. Records live in this process
// (a stdio child's task lives in that child, so a replica could not reach
// it anyway), for the task's ttl capped at maxTaskKeep, at most
// maxLiveTasks not yet finished per principal and maxTaskRecords in all.
//
// What the upstream says of a task is rebuilt, never passed on: its status
// checked, its statusMessage cleaned and bounded (the kernel), its times
// bounded, its id replaced; tasks/result's payload goes through the same
// result processing as a relayed call's (result.go) and the kernel's
// envelope. notifications/tasks/status from an upstream is not relayed
// (a client polls with tasks/get, as 2025-11-25 asks it to be able to):
// over HTTP there is no stream to carry it outside a request, and the
// gateway does not tell its clients' sessions apart by task.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
)

// Task limits.
const (
	maxLiveTasks   = 32        // tasks not known to be finished, per principal
	maxTaskRecords = 4096      // task records in all
	maxTaskKeep    = time.Hour // the longest a task is kept, whatever its ttl
	taskPollTime   = 5 * time.Second
	minPoll        = 100 * time.Millisecond
	maxPoll        = time.Minute
)

// upTasks is what an upstream's initialize result declares of tasks.
type upTasks struct{ call, list, cancel bool }

// parseUpTasks reads capabilities.tasks of an initialize result.
func parseUpTasks(result json.RawMessage) upTasks {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Tasks *struct {
				List     json.RawMessage `json:"list"`
				Cancel   json.RawMessage `json:"cancel"`
				Requests struct {
					Tools struct {
						Call json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil || r.Capabilities.Tasks == nil || r.ProtocolVersion != kernel.TaskVersion {
		return upTasks{}
	}
	t := r.Capabilities.Tasks
	return upTasks{call: isObject(t.Requests.Tools.Call), list: isObject(t.List), cancel: isObject(t.Cancel)}
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// taskSupportOf is a tool definition's execution.taskSupport as the
// gateway reads it: "optional", "required", or "" (anything else).
func taskSupportOf(raw json.RawMessage) string {
	var t struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return ""
	}
	switch t.Execution.TaskSupport {
	case kernel.TaskOptional, kernel.TaskRequired:
		return t.Execution.TaskSupport
	}
	return ""
}

// tasksRelayed reports whether the gateway relays the tasks of the link's
// current session: one that declared tasks for tools/call on 2025-11-25,
// of a stdio child on the gateway's own connection or of a URL upstream
// (httptask.go).
func (l *link) tasksRelayed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.taskConnLocked() != nil && l.rec != nil && l.upTasks().call
}

// upTasks is what the current session declared (l.mu held).
func (l *link) upTasks() upTasks {
	if l.rec == nil {
		return upTasks{}
	}
	l.rec.mu.Lock()
	defer l.rec.mu.Unlock()
	return l.rec.tasks
}

// taskRec is one task the gateway relays.
type taskRec struct {
	id        string
	principal string
	l         *link
	sess      *mcp.ClientSession // the upstream session that runs it
	upID      string             // the upstream's id; never sent to a client
	tool      string             // the exposed tool
	upTool    string
	created   time.Time
	expires   time.Time
	ttl       *int64
	last      kernel.Task         // as last seen
	local     *mcp.CallToolResult // a call refused before any task was created
}

// finished reports whether r was last seen finished (the store's lock
// held, or on a snapshot's copy).
func (r *taskRec) finished() bool { return finished(r.last) }

func finished(t kernel.Task) bool {
	switch t.Status {
	case kernel.TaskCompleted, kernel.TaskFailed, kernel.TaskCancelled:
		return true
	}
	return false
}

// taskStore holds the task records of this process.
type taskStore struct {
	mu   sync.Mutex
	byID map[string]*taskRec
}

// errTaskBudget is a principal's refusal for too many unfinished tasks.
var errTaskBudget = errors.New("task budget")

// add records r under a fresh id, within the budget.
func (s *taskStore) add(r *taskRec, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]*taskRec{}
	}
	live := 0
	for id, o := range s.byID {
		if !now.Before(o.expires) {
			delete(s.byID, id)
			continue
		}
		if o.principal == r.principal && o.local == nil && !o.finished() {
			live++
		}
	}
	if r.local == nil && live >= maxLiveTasks {
		return errTaskBudget
	}
	if len(s.byID) >= maxTaskRecords {
		// the oldest finished record goes; none finished: refuse
		var oldest *taskRec
		for _, o := range s.byID {
			if (o.local != nil || o.finished()) && (oldest == nil || o.created.Before(oldest.created)) {
				oldest = o
			}
		}
		if oldest == nil {
			return errTaskBudget
		}
		delete(s.byID, oldest.id)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	r.id = r.l.u.prefix() + "." + base64.RawURLEncoding.EncodeToString(b[:])
	r.last.TaskID = r.id
	s.byID[r.id] = r
	return nil
}

// get returns the caller's task called id, or nil: an unknown, expired or
// another principal's id alike.
func (s *taskStore) get(p identity.Principal, id string, now time.Time) *taskRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.byID[id]
	if r == nil || r.principal != p.ID {
		return nil
	}
	if !now.Before(r.expires) {
		delete(s.byID, id)
		return nil
	}
	return r
}

func (s *taskStore) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

// swap records what was last seen of r, and returns what was before.
func (s *taskStore) swap(r *taskRec, t kernel.Task) kernel.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := r.last
	r.last = t
	return before
}

// has reports whether a task called id is held here, for any principal.
func (s *taskStore) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.byID[id]
	return ok
}

// idsByPrincipal is every task id held here, by principal.
func (s *taskStore) idsByPrincipal() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for id, r := range s.byID {
		out[r.principal] = append(out[r.principal], id)
	}
	return out
}

// list returns the caller's live tasks, oldest first.
func (s *taskStore) list(p identity.Principal, now time.Time) []*taskRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*taskRec
	for _, r := range s.byID {
		if r.principal == p.ID && now.Before(r.expires) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *taskRec) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return compareStrings(a.id, b.id)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// snapshot returns r.last under the lock.
func (s *taskStore) snapshot(r *taskRec) kernel.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.last
}

// TaskRelay is the gateway's kernel.TaskRelay, nil when no upstream's
// tasks are relayed: set it as kernel.Options.Tasks. Call it after Start.
func (g *Gateway) TaskRelay() kernel.TaskRelay {
	if g.TaskCapability() == nil {
		return nil
	}
	return g
}

// TaskCapability is the tasks capability: tools/call and list whenever an
// upstream's tasks are relayed, cancel when one of those cancels.
func (g *Gateway) TaskCapability() *kernel.TaskCapability {
	var c *kernel.TaskCapability
	for _, l := range g.links {
		if !l.tasksRelayed() {
			continue
		}
		if c == nil {
			c = &kernel.TaskCapability{List: true}
		}
		l.mu.Lock()
		c.Cancel = c.Cancel || l.upTasks().cancel
		l.mu.Unlock()
	}
	return c
}

func (g *Gateway) now() time.Time { return time.Now() }

// keep is how long a task is kept: its ttl, capped at maxTaskKeep.
func keep(ttl *int64) time.Duration {
	if ttl == nil || *ttl < 0 || *ttl > maxTaskKeep.Milliseconds() { // compared in milliseconds: no overflow
		return maxTaskKeep
	}
	return time.Duration(*ttl) * time.Millisecond
}

// startTask relays a task-augmented call (call.go's call, once the pin,
// the preview's hash and the arguments are checked).
func (g *Gateway) startTask(ctx context.Context, l *link, sess *mcp.ClientSession, call *kernel.Call, exposed, name string, args json.RawMessage, tp kernel.TaskParams) (any, error) {
	c := l.taskConn(sess)
	if c == nil || !l.tasksRelayed() {
		return nil, &kernel.Error{Code: kernel.UpstreamUnavailable,
			Message: fmt.Sprintf("The upstream %q cannot run %q as a task now (its session does not relay tasks); nothing was sent.", l.u.Name, exposed),
			Hint:    "Try again in a few seconds."}
	}
	now := g.now()
	ttl := tp.TTL
	if ttl == nil || keep(ttl) == maxTaskKeep {
		ms := maxTaskKeep.Milliseconds()
		ttl = &ms
	}
	r := &taskRec{principal: call.Principal.ID, l: l, sess: sess, tool: exposed, upTool: name, created: now,
		expires: now.Add(keep(ttl)), ttl: ttl,
		last: kernel.Task{Status: kernel.TaskWorking, CreatedAt: now, LastUpdatedAt: now, TTL: ttl}}
	if err := g.tasks.add(r, now); err != nil { // the slot is taken before anything is sent
		return nil, &kernel.Error{Code: kernel.ResourceExhausted,
			Message: fmt.Sprintf("You have %d tasks through the gateway that are not known to have finished; nothing was sent.", maxLiveTasks),
			Hint:    "Wait for them (tasks/get), fetch their results or cancel them, then try again."}
	}
	// Recorded for the other replicas before anything is sent
	// (replicatasks.go): a task they could not find is not created.
	if err := g.recordTask(ctx, r, g.tasks.snapshot(r)); err != nil {
		g.tasks.forget(r.id)
		return nil, call.StoreUnavailable(fmt.Errorf("recording a task: %w", err))
	}
	timeout := l.u.callTimeout(g.cfg.CallTimeout)
	resp, err := c.call(ctx, time.Now().Add(timeout), func(b []byte, id string) ([]byte, error) {
		type task struct {
			TTL *int64 `json:"ttl,omitempty"`
		}
		w := struct {
			JSONRPC string `json:"jsonrpc"`
			ID      string `json:"id"`
			Method  string `json:"method"`
			Params  struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
				Task      task            `json:"task"`
			} `json:"params"`
		}{JSONRPC: "2.0", ID: id, Method: "tools/call"}
		w.Params.Name, w.Params.Arguments, w.Params.Task.TTL = name, args, ttl
		if len(args) == 0 {
			w.Params.Arguments = json.RawMessage(`{}`)
		}
		out, err := json.Marshal(&w)
		return append(b, out...), err
	})
	if err == nil && resp.Error != nil {
		err = g.upstreamRPCError(l, "tools/call", resp.Error)
	}
	var up upTask
	if err == nil {
		if up, err = decodeCreateTask(resp.Result); err != nil {
			err = g.callError(ctx, l, name, timeout, fmt.Errorf("calling %q: %w", "tools/call", badResult{err}))
		}
	} else if !passes(err) {
		err = g.callError(ctx, l, name, timeout, err)
	}
	if err != nil {
		g.tasks.forget(r.id)
		g.forgetTask(r.principal, r.id)
		return nil, err
	}
	r.upID = up.TaskID
	t := g.view(r, up, now)
	g.updateTask(r, t)
	return kernel.TaskCreated{Task: t}, nil
}

// upstreamRPCError is a JSON-RPC error an upstream answered to a call, as
// a tool error: its message scrubbed and enveloped as the upstream's.
func (g *Gateway) upstreamRPCError(l *link, method string, err error) error {
	e := rpcError(err)
	return &kernel.Error{Code: kernel.UpstreamError, Upstream: g.scrub.text(e.Message),
		Message: fmt.Sprintf("The upstream %q refused %s (JSON-RPC error %d).", l.u.Name, method, e.Code)}
}

// rpcError is a response's error as a JSON-RPC error object.
func rpcError(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// upTask is a Task as an upstream wrote it.
type upTask struct {
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"statusMessage"`
	LastUpdatedAt string   `json:"lastUpdatedAt"`
	PollInterval  *float64 `json:"pollInterval"`
}

func decodeTask(raw json.RawMessage) (upTask, error) {
	var t upTask
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, err
	}
	switch t.Status {
	case kernel.TaskWorking, kernel.TaskInputRequired, kernel.TaskCompleted, kernel.TaskFailed, kernel.TaskCancelled:
	default:
		return t, fmt.Errorf("task status %q is not one of 2025-11-25", t.Status)
	}
	if t.TaskID == "" || len(t.TaskID) > 1024 {
		return t, errors.New("task without a usable taskId")
	}
	return t, nil
}

func decodeCreateTask(raw json.RawMessage) (upTask, error) {
	var r struct {
		Task json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Task) == 0 {
		return upTask{}, errors.New("a task-augmented call answered without a task")
	}
	return decodeTask(r.Task)
}

// view is the client's Task of r from what the upstream said: the
// gateway's id, its own creation time and ttl, the upstream's status and
// message (the kernel cleans and bounds it), its update time kept within
// [created, now], its poll interval within [minPoll, maxPoll].
func (g *Gateway) view(r *taskRec, up upTask, now time.Time) kernel.Task {
	msg := ""
	if up.StatusMessage != "" {
		msg = fmt.Sprintf("[the MCP server %q says] %s", r.l.u.Name, g.scrub.text(up.StatusMessage))
	}
	t := kernel.Task{TaskID: r.id, Status: up.Status, StatusMessage: msg,
		CreatedAt: r.created, LastUpdatedAt: now, TTL: r.ttl}
	if at, err := time.Parse(time.RFC3339Nano, up.LastUpdatedAt); err == nil && !at.Before(r.created) && !at.After(now) {
		t.LastUpdatedAt = at
	}
	if up.PollInterval != nil { // clamped as a float: no overflow
		ms := int64(min(max(*up.PollInterval, float64(minPoll.Milliseconds())), float64(maxPoll.Milliseconds())))
		t.PollInterval = &ms
	}
	return t
}

// upCall sends a task request about r to its upstream session.
func (g *Gateway) upCall(ctx context.Context, r *taskRec, method string, timeout time.Duration) (*jsonrpc.Response, error) {
	c := r.l.taskConn(r.sess)
	if c == nil {
		return nil, errTaskLost
	}
	return c.call(ctx, time.Now().Add(timeout), func(b []byte, id string) ([]byte, error) {
		out, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]string{"taskId": r.upID}})
		return append(b, out...), err
	})
}

// errTaskLost: the upstream session that ran the task has ended.
var errTaskLost = errors.New("the upstream session that ran the task has ended")

// lost is r's view once its upstream session ended: failed.
func (g *Gateway) lost(r *taskRec) kernel.Task {
	t := g.tasks.snapshot(r)
	if finished(t) {
		return t
	}
	t.Status = kernel.TaskFailed
	t.StatusMessage = fmt.Sprintf("The upstream %q restarted; the task was lost with it.", r.l.u.Name)
	t.LastUpdatedAt = g.now()
	g.updateTask(r, t)
	return t
}

// updateTask records what was last seen of r, here and, when it changed
// what a client reads, in its record for the other replicas.
func (g *Gateway) updateTask(r *taskRec, t kernel.Task) {
	before := g.tasks.swap(r, t)
	g.mirrorTask(r, before, t)
}

// Refused records a call the kernel refused before any task was created.
func (g *Gateway) Refused(_ context.Context, p identity.Principal, tool string, res *mcp.CallToolResult) (kernel.Task, error) {
	l := g.linkOfTool(tool)
	if l == nil {
		return kernel.Task{}, fmt.Errorf("task of an unknown tool %q", tool)
	}
	now := g.now()
	ms := maxTaskKeep.Milliseconds()
	r := &taskRec{principal: p.ID, l: l, tool: tool, created: now, expires: now.Add(maxTaskKeep), ttl: &ms, local: res,
		last: kernel.Task{Status: kernel.TaskFailed, CreatedAt: now, LastUpdatedAt: now, TTL: &ms,
			StatusMessage: "The gateway refused the call before any task was created; tasks/result gives its answer."}}
	if err := g.tasks.add(r, now); err != nil {
		return kernel.Task{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many tasks"}
	}
	// Recorded for the other replicas; a store that fails leaves the
	// refusal's task to this replica (nothing ran: there is nothing else
	// to decide).
	if err := g.recordTask(context.Background(), r, g.tasks.snapshot(r)); err != nil {
		g.logger.Warn("a refused call's task could not be recorded in the shared store; only this replica answers for it", "error", err.Error())
	}
	return g.tasks.snapshot(r), nil
}

// linkOfTool is the link of an exposed tool name.
func (g *Gateway) linkOfTool(exposed string) *link {
	for _, l := range g.links {
		if len(exposed) > len(l.u.prefix()) && exposed[:len(l.u.prefix())+1] == l.u.prefix()+"." {
			return l
		}
	}
	return nil
}

// Get answers tasks/get.
func (g *Gateway) Get(ctx context.Context, p identity.Principal, id string) (kernel.Task, error) {
	r := g.tasks.get(p, id, g.now())
	if r == nil {
		return kernel.Task{}, kernel.ErrNoTask
	}
	return g.refresh(ctx, r, "tasks/get", taskPollTime)
}

// refresh asks the upstream about r (tasks/get or tasks/cancel).
func (g *Gateway) refresh(ctx context.Context, r *taskRec, method string, timeout time.Duration) (kernel.Task, error) {
	if r.local != nil {
		if method == "tasks/cancel" {
			return kernel.Task{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Cannot cancel task: already in terminal status"}
		}
		return g.tasks.snapshot(r), nil
	}
	resp, err := g.upCall(ctx, r, method, timeout)
	switch {
	case errors.Is(err, errTaskLost):
		return g.lost(r), nil
	case err != nil:
		return kernel.Task{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("The upstream %q did not answer %s.", r.l.u.Name, method)}
	case resp.Error != nil && rpcError(resp.Error).Code == jsonrpc.CodeInvalidParams && method == "tasks/get":
		g.tasks.forget(r.id) // the upstream no longer has it
		g.forgetTask(r.principal, r.id)
		return kernel.Task{}, kernel.ErrNoTask
	case resp.Error != nil:
		return kernel.Task{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("The upstream %q refused %s (JSON-RPC error %d).", r.l.u.Name, method, rpcError(resp.Error).Code)}
	}
	up, err := decodeTask(resp.Result)
	if err == nil && up.TaskID != r.upID {
		err = errors.New("another task") // never read as this one's status
	}
	if err != nil {
		return kernel.Task{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("The upstream %q answered %s with something that is not the task it was asked about.", r.l.u.Name, method)}
	}
	t := g.view(r, up, g.now())
	g.updateTask(r, t)
	return t, nil
}

// Cancel answers tasks/cancel.
func (g *Gateway) Cancel(ctx context.Context, p identity.Principal, id string) (kernel.Task, error) {
	r := g.tasks.get(p, id, g.now())
	if r == nil {
		return kernel.Task{}, kernel.ErrNoTask
	}
	return g.refresh(ctx, r, "tasks/cancel", taskPollTime)
}

// List answers tasks/list: the caller's tasks, each asked of its upstream
// (what was last seen when the upstream does not answer in time), and
// with ShareParked the ones other replicas hold, as they last saw them
// (replicatasks.go). One page: a principal has at most maxLiveTasks
// unfinished tasks a replica.
func (g *Gateway) List(ctx context.Context, p identity.Principal, cursor string) ([]kernel.Task, string, error) {
	if cursor != "" {
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid cursor"}
	}
	recs := g.tasks.list(p, g.now())
	local := make(map[string]bool, len(recs))
	for _, r := range recs {
		local[r.id] = true
	}
	remote, err := g.remoteTasks(ctx, p, local) // the other replicas' (replicatasks.go)
	if err != nil {
		g.logger.Warn("tasks/list refused: the shared store did not answer", "error", err.Error())
		return nil, "", listUnavailable()
	}
	out := make([]kernel.Task, 0, len(recs)+len(remote))
	out = append(out, remote...)
	for _, r := range recs {
		t := g.tasks.snapshot(r)
		if r.local == nil && !finished(t) {
			if fresh, err := g.refresh(ctx, r, "tasks/get", time.Second); err == nil {
				t = fresh
			} else if errors.Is(err, kernel.ErrNoTask) {
				continue
			}
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b kernel.Task) int { // oldest first, every replica's alike
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(a.TaskID, b.TaskID)
	})
	return out, "", nil
}

// Result answers tasks/result: the upstream's result, processed as a
// relayed call's (result.go), or the refusal of a call refused before any
// task was created.
func (g *Gateway) Result(ctx context.Context, p identity.Principal, id string) (kernel.TaskOutcome, error) {
	r := g.tasks.get(p, id, g.now())
	if r == nil {
		return kernel.TaskOutcome{}, kernel.ErrNoTask
	}
	if r.local != nil {
		return kernel.TaskOutcome{Tool: r.tool, Result: r.local}, nil
	}
	timeout := r.l.u.callTimeout(g.cfg.CallTimeout)
	resp, err := g.upCall(ctx, r, "tasks/result", timeout)
	switch {
	case errors.Is(err, errTaskLost):
		g.lost(r)
		return kernel.TaskOutcome{Tool: r.tool, Err: &kernel.Error{Code: kernel.UpstreamUnavailable,
			Message: fmt.Sprintf("The upstream %q restarted; the task was lost with it.", r.l.u.Name)}}, nil
	case err != nil:
		return kernel.TaskOutcome{Tool: r.tool, Err: g.callError(ctx, r.l, r.upTool, timeout, err)}, nil
	case resp.Error != nil:
		return kernel.TaskOutcome{Tool: r.tool, Err: g.upstreamRPCError(r.l, "tasks/result", resp.Error)}, nil
	}
	res, err := decodeCheckedCallResult(resp.Result)
	if err != nil {
		return kernel.TaskOutcome{Tool: r.tool, Err: g.callError(ctx, r.l, r.upTool, timeout, badResult{err})}, nil
	}
	res.Meta = nil // the upstream's related-task names its own id; the kernel writes the gateway's
	out, err := g.result(r.l, r.upTool, res)
	return kernel.TaskOutcome{Tool: r.tool, Out: out, Err: err}, nil
}
