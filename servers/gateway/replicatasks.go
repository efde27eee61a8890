package gateway

// Tasks across replicas (issue 32). A relayed task (tasks.go) runs in the
// upstream session of the replica that created it — a stdio child of that
// process, or a URL upstream's session that process holds — so only that
// replica can ask the upstream about it. With ShareParked, the replica
// that creates a task records in the shared store which replica holds it
// and what it last saw of it; then:
//
//   - tasks/get, tasks/result and tasks/cancel that reach another replica
//     are forwarded to the holder by the kernel (RouteTask, a
//     kernel.TaskRouter: the client's own request, as an answer to a
//     parked call is — the holder authenticates it, spends the rate limit,
//     checks the principal and writes the audit record);
//   - tasks/list on any replica lists the caller's tasks of every replica:
//     its own, asked of their upstreams as before, and the others' as their
//     holders last saw them (a holder writes a task's record again when
//     its status or message changes, which a tasks/get through any replica
//     makes it see).
//
// The records of a principal are one hash in the store, its key a digest
// of the principal's id and each field a digest of a task id (never the
// ids): RouteTask reads only the caller's own hash, so another principal's
// task id is routed nowhere and answered as an unknown one. A value is the
// holder's advertised URL and the task's view, sealed with the
// requestState key the replicas share under its own purpose and bound to
// its key and field: a value written by anyone without that key, or moved
// from another task's or principal's field, does not open and is never
// followed or listed. It expires with the task (its keep, at most an
// hour); the hash with the newest of them. A task is recorded before
// anything is sent upstream: a store that fails then fails the call with
// store_unavailable. Records are removed when the task is forgotten and
// when the gateway closes (its tasks end with it).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// The gateway routes task requests (kernel/stateroute.go) when it is the
// kernel's StateRouter.
var _ kernel.TaskRouter = (*Gateway)(nil)

// purposeTaskRecord is the seal purpose of a task's record: it never opens
// as a requestState or a parked call's record, nor they as it.
const purposeTaskRecord = "bulwark-gateway-task-replica"

// maxRecordedMessage bounds a recorded task's status message, in bytes:
// the client sees at most 1 KB of it, cleaned (kernel/tasks.go), and a
// record must fit a sealed handle.
const maxRecordedMessage = 4 << 10

// maxListedRecords bounds the records tasks/list reads of a principal
// from the store: each replica keeps at most maxTaskRecords.
const maxListedRecords = 4 * maxTaskRecords

// taskRecordValue is what a task's record holds, sealed.
type taskRecordValue struct {
	Holder string      `json:"holder"` // the holder's advertised MCP endpoint
	Task   kernel.Task `json:"task"`   // as the holder last saw it
}

// taskKey is the hash of a principal's task records and a task's field in
// it: digests, never the ids.
func (s *sharing) taskKey(principal, id string) (key, field string) {
	p := sha256.Sum256([]byte("bulwark-gateway-tasks\x00" + principal))
	f := sha256.Sum256([]byte("bulwark-gateway-task\x00" + id))
	return s.TaskKeyPrefix + hex.EncodeToString(p[:]), hex.EncodeToString(f[:])
}

// recordTask writes r's record with t, its view. Without ShareParked it
// writes nothing.
func (g *Gateway) recordTask(ctx context.Context, r *taskRec, t kernel.Task) error {
	s := g.replicas.Load()
	if s == nil {
		return nil
	}
	key, field := s.taskKey(r.principal, r.id)
	t.StatusMessage = t.StatusMessage[:untrusted.CutIndex(t.StatusMessage, maxRecordedMessage)]
	raw, err := json.Marshal(taskRecordValue{Holder: s.advertise.String(), Task: t})
	if err != nil {
		return err
	}
	life := time.Until(r.expires)
	if life <= 0 {
		return nil
	}
	v, err := s.Sealer.SealFor(purposeTaskRecord, key+"/"+field, raw, life)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Timeout)
	defer cancel()
	// The hash lives as long as the longest task recorded in it can: every
	// task is kept at most maxTaskKeep, so an hour past its newest record.
	_, err = s.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, field, v)
		p.PExpire(ctx, key, maxTaskKeep+time.Minute)
		return nil
	})
	return err
}

// mirrorTask writes r's record again when what a client reads of it
// changed (its status, message or poll interval); a failure is logged,
// and the other replicas list what was recorded before.
func (g *Gateway) mirrorTask(r *taskRec, before, now kernel.Task) {
	if g.replicas.Load() == nil || r.id == "" ||
		(before.Status == now.Status && before.StatusMessage == now.StatusMessage && samePoll(before.PollInterval, now.PollInterval)) {
		return
	}
	if err := g.recordTask(context.Background(), r, now); err != nil {
		g.logger.Warn("a task's record in the shared store could not be updated; the other replicas list its earlier status until it is", "error", err.Error())
	}
}

func samePoll(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// forgetTask removes the records of the tasks ids of principal. A failure
// is logged only: the records expire with their tasks, and until then a
// request routed by them is answered by the holder as an unknown id's.
func (g *Gateway) forgetTask(principal string, ids ...string) {
	s := g.replicas.Load()
	if s == nil || len(ids) == 0 {
		return
	}
	var key string
	fields := make([]string, 0, len(ids))
	for _, id := range ids {
		k, f := s.taskKey(principal, id)
		key, fields = k, append(fields, f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	if err := s.Redis.HDel(ctx, key, fields...).Err(); err != nil {
		g.logger.Warn("a task's record could not be removed from the shared store; it expires with the task", "error", err.Error())
	}
}

// forgetAllTasks removes the records of every task this replica holds (it
// is closing: its tasks end with its upstream sessions).
func (g *Gateway) forgetAllTasks() {
	if g.replicas.Load() == nil {
		return
	}
	for principal, ids := range g.tasks.idsByPrincipal() {
		g.forgetTask(principal, ids...)
	}
}

// RouteTask is the gateway's kernel.TaskRouter: the replica that holds the
// caller's task id, when it is not this one.
func (g *Gateway) RouteTask(ctx context.Context, p identity.Principal, id string) (kernel.Route, error) {
	s := g.replicas.Load()
	if s == nil || g.tasks.has(id) {
		return kernel.Route{}, nil
	}
	key, field := s.taskKey(p.ID, id)
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	v, err := s.Redis.HGet(ctx, key, field).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return kernel.Route{}, nil // not the caller's, expired, or never recorded: answered here
	case err != nil:
		return kernel.Route{}, err
	}
	rv, ok := g.openTaskRecord(s, key, field, v)
	if !ok {
		return kernel.Route{}, nil
	}
	u, err := peerURL(rv.Holder)
	if err != nil || u.String() == s.advertise.String() {
		return kernel.Route{}, nil // this replica's own, and no longer held here
	}
	return kernel.Route{URL: u, Timeout: g.forwardTimeout()}, nil
}

// openTaskRecord opens a task's record; ok is false (and a record that
// does not open is logged) when it is not one to follow.
func (g *Gateway) openTaskRecord(s *sharing, key, field, v string) (taskRecordValue, bool) {
	var rv taskRecordValue
	raw, err := s.Sealer.OpenFor(purposeTaskRecord, key+"/"+field, v)
	if err != nil {
		if !errors.Is(err, seal.ErrExpired) {
			g.logger.Warn("a task's record in the shared store does not open with the requestState key: not followed (another key, or written by someone without it)")
		}
		return rv, false
	}
	if json.Unmarshal(raw, &rv) != nil || rv.Task.TaskID == "" {
		return rv, false
	}
	return rv, true
}

// remoteTasks are the caller's tasks that other replicas hold, as their
// holders last saw them; local are the ids this replica holds (listed
// from its own store).
func (g *Gateway) remoteTasks(ctx context.Context, p identity.Principal, local map[string]bool) ([]kernel.Task, error) {
	s := g.replicas.Load()
	if s == nil {
		return nil, nil
	}
	key, _ := s.taskKey(p.ID, "")
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	var out []kernel.Task
	var stale []string
	var cursor uint64
	read := 0
	for {
		kv, next, err := s.Redis.HScan(ctx, key, cursor, "", 256).Result()
		if err != nil {
			return nil, err
		}
		for i := 0; i+1 < len(kv); i += 2 {
			read++
			rv, ok := g.openTaskRecord(s, key, kv[i], kv[i+1])
			switch {
			case !ok:
				stale = append(stale, kv[i])
			case rv.Holder != s.advertise.String() && !local[rv.Task.TaskID]:
				out = append(out, rv.Task)
			}
		}
		cursor = next
		if cursor == 0 || read >= maxListedRecords {
			break
		}
	}
	if len(stale) > 0 { // expired or unreadable: no replica follows them
		_ = s.Redis.HDel(ctx, key, stale...).Err()
	}
	return out, nil
}

// listUnavailable is tasks/list's answer when the shared store does not
// answer: refused, as a list without the other replicas' tasks would not
// be the truth.
func listUnavailable() error {
	e := ratelimit.Unavailable("")
	return &jsonrpc.Error{Code: e.Code, Message: e.Message, Data: e.Data}
}
