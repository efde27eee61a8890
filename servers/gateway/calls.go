package gateway

// Which relayed call an upstream's notification belongs to: the link's
// calls by progress token (callTable), and the upstream's progress and log
// notifications routed to them (onProgress, onLog; rawNote on the read loop
// of a raw connection).

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// The progress tokens the gateway sends upstream: "bulwark-N" for a
// relayed call, "bulwark-relay-N" for an upstream call of a relaying
// upstream (relay.go), N from the link's nextTok, so that every token has
// its own number. The link's calls are kept by token (callTable), keyed by
// the number and the kind, so that a token's text is built only when it is
// sent (a call that wants progress, a relaying upstream's call): it was two
// allocations per call.
const (
	callTokPrefix  = "bulwark-"
	relayTokPrefix = "bulwark-relay-"
)

// tokKey is a progress token, as its number and kind.
type tokKey struct {
	n     uint64
	relay bool
}

// String is the token as sent.
func (k tokKey) String() string {
	p := callTokPrefix
	if k.relay {
		p = relayTokPrefix
	}
	return p + strconv.FormatUint(k.n, 10)
}

// parseTok is the key of the token tok, when tok is exactly one the
// gateway's String writes (no sign, no leading zero, nothing around it).
func parseTok(tok string) (tokKey, bool) {
	var k tokKey
	digits, ok := strings.CutPrefix(tok, relayTokPrefix)
	if k.relay = ok; !ok {
		if digits, ok = strings.CutPrefix(tok, callTokPrefix); !ok {
			return k, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return k, false
	}
	var buf [20]byte
	if string(strconv.AppendUint(buf[:0], n, 10)) != digits {
		return k, false
	}
	k.n = n
	return k, true
}

// callTable holds a link's calls by progress token: for their progress,
// and their logs (onLog); a call is forgotten notifyGrace after its end
// (graceQueue). A mutex and a map, where a sync.Map allocated an entry for
// every Store.
type callTable struct {
	mu sync.Mutex
	m  map[tokKey]*kernel.Call
}

func (t *callTable) store(k tokKey, c *kernel.Call) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[tokKey]*kernel.Call{}
	}
	t.m[k] = c
	t.mu.Unlock()
}

func (t *callTable) load(k tokKey) *kernel.Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[k]
}

func (t *callTable) delete(k tokKey) {
	t.mu.Lock()
	delete(t.m, k)
	t.mu.Unlock()
}

// any is one of the calls, or nil when there are none.
func (t *callTable) any() *kernel.Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.m {
		return c
	}
	return nil
}

// forget is the end of a call's grace (graceQueue): the call leaves the
// table, and, for a relayed call, the count of calls in flight.
func (l *link) forget(e graceEnd) {
	l.calls.delete(e.key)
	if e.counted {
		l.inCalls.Add(-1)
	}
}

// onProgress relays an upstream's progress to the call it belongs to; the
// kernel cleans the message like any upstream text.
func (l *link) onProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	k, ok := parseTok(tok)
	if !ok {
		return
	}
	c := l.calls.load(k)
	if c == nil {
		return
	}
	c.Progress(ctx, req.Params.Progress, req.Params.Total, req.Params.Message)
}

// rawNote handles, on the read loop of a connection whose calls are relayed
// raw (rawcall.go), the upstream's progress and log notifications — in the
// order they came, before the result that follows them reaches its call,
// which the go-sdk's own dispatch (another goroutine) does not promise: a
// call whose result is written has no stream left for its progress. It
// reports whether it handled msg.
func (l *link) rawNote(msg *jsonrpc.Request) bool {
	switch msg.Method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(msg.Params, &p) != nil {
			return false // the go-sdk's handling, and its error
		}
		l.onProgress(context.Background(), &mcp.ProgressNotificationClientRequest{Params: &p})
		return true
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if json.Unmarshal(msg.Params, &p) != nil {
			return false
		}
		l.onLog(context.Background(), &mcp.LoggingMessageRequest{Params: &p})
		return true
	}
	return false
}

// onLog relays an upstream's log message to the one call in flight, when
// there is exactly one (a log line is not tied to a call, and must not reach
// another principal's client); otherwise it goes to the gateway's log only.
// Either way it is sanitized like a result.
func (l *link) onLog(ctx context.Context, req *mcp.LoggingMessageRequest) {
	var only *kernel.Call
	if l.inCalls.Load() == 1 {
		only = l.calls.any()
	}
	level := slog.LevelInfo
	switch req.Params.Level {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	msg := "upstream " + l.u.Name + " logged"
	if only != nil {
		only.Log(ctx, level, msg, req.Params.Data)
		return
	}
	raw, _ := json.Marshal(req.Params.Data)
	l.g.logger.Log(ctx, level, msg, "upstream", l.u.Name, "data", l.g.scrub.text(string(l.g.cleanJSON(raw))))
}
