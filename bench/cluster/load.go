package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Kinds of outcome. The first four are expected; the rest are errors.
const (
	kindOK          = "ok"
	kindToken       = "token_issued"   // a gated call answered with a token, as asked
	kindReplayDone  = "replay_refused" // a spent token replayed and refused, as it must be
	kindGreedyLimit = "rate_limited_greedy"

	kindStore     = "store_unavailable"
	kindLimited   = "rate_limited"
	kindTransport = "transport"    // connection refused, reset, EOF, timeout
	kindProxy     = "proxy_5xx"    // a 502/503/504 the load balancer made
	kindTool      = "tool_error"   // any other tool error
	kindOther     = "other"        // anything else
	kindReplayOK  = "replay_twice" // a spent token confirmed again: an invariant broken
)

// expected reports whether an outcome is what a healthy deployment gives.
func expected(kind string) bool {
	switch kind {
	case kindOK, kindToken, kindReplayDone, kindGreedyLimit:
		return true
	}
	return false
}

// result is one call's outcome.
type result struct {
	at   time.Time
	kind string
}

// samples keeps the first message of each kind of error, for the report.
var samples sync.Map

// sample records what a call of tool answered, once per kind.
func sample(kind, tool string, a *answer, err error) {
	if expected(kind) || kind == "" || (a != nil && a.hasToken()) {
		return
	}
	msg := ""
	switch {
	case err != nil:
		msg = err.Error()
	case a.Error != nil:
		msg = fmt.Sprintf("%d %s", a.status, a.Error.Data)
	default:
		msg = fmt.Sprintf("%d %s", a.status, a.text())
	}
	if len(msg) > 200 {
		msg = msg[:200]
	}
	samples.LoadOrStore(kind, tool+": "+msg)
}

// caller posts stateless 2026-07-28 tools/call requests as one principal.
type caller struct {
	url, key string
	hc       *http.Client
	id       int
	greedy   bool // its rate-limit refusals are expected
}

// answer is what a tools/call came back with.
type answer struct {
	status int
	Result struct {
		IsError           bool             `json:"isError"`
		StructuredContent map[string]any   `json:"structuredContent"`
		Content           []map[string]any `json:"content"`
	} `json:"result"`
	Error *struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	} `json:"error"`
}

func (a *answer) text() string {
	var b strings.Builder
	for _, c := range a.Result.Content {
		if s, ok := c["text"].(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}

// call makes one tools/call; err is a transport failure.
func (c *caller) call(ctx context.Context, tool string, args map[string]any) (*answer, error) {
	c.id++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "cluster-load", "version": "0"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{}}}})
	req, err := http.NewRequestWithContext(ctx, "POST", c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool, "Authorization": "Bearer " + c.key} {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil && ctx.Err() != nil {
		return nil, errRunOver
	}
	if err != nil {
		sample(classify(nil, err), tool, nil, err)
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	a := &answer{status: resp.StatusCode}
	if err := json.Unmarshal(raw, a); err != nil && resp.StatusCode < 500 {
		err = fmt.Errorf("status %d: undecodable answer", resp.StatusCode)
		sample(kindOther, tool, a, err)
		return a, err
	}
	if k := classify(a, nil); !(c.greedy && k == kindLimited) {
		sample(k, tool, a, nil)
	}
	return a, nil
}

// errRunOver is the error of a call the end of the run cut short: not
// counted.
var errRunOver = errors.New("the run is over")

// classify names the outcome of a call; "" for one the end of the run cut.
func classify(a *answer, err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, errRunOver):
		return ""
	case err != nil && (errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "connection")):
		return kindTransport
	case err != nil:
		return kindOther
	case a.Error != nil && strings.Contains(string(a.Error.Data), "store_unavailable"):
		return kindStore
	case a.Error != nil && strings.Contains(string(a.Error.Data), "rate_limited"):
		return kindLimited
	case a.status >= 502 && a.status <= 504:
		return kindProxy
	case a.Error != nil:
		return kindOther
	case a.Result.IsError && strings.Contains(a.text(), "store_unavailable"):
		return kindStore
	case a.Result.IsError:
		return kindTool
	}
	return kindOK
}

// ledger is what the load did, for the report and the checks.
type ledger struct {
	mu      sync.Mutex
	results []result
	created map[string]bool // RRSets whose creation was acknowledged
	deleted map[string]bool // RRSets whose confirmed deletion was acknowledged
	unsure  map[string]bool // RRSets whose confirmed deletion failed: either state is right
}

func newLedger() *ledger {
	return &ledger{created: map[string]bool{}, deleted: map[string]bool{}, unsure: map[string]bool{}}
}

func (l *ledger) add(kind string) {
	if kind == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.results = append(l.results, result{at: time.Now(), kind: kind})
}

func (l *ledger) mark(m map[string]bool, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m[name] = true
}

// worker is one normal principal: reads, and confirmed writes of RRSets of
// its own, at about rate calls a second, until ctx ends.
func worker(ctx context.Context, c *caller, zone string, rate float64, l *ledger) {
	pause := time.Duration(float64(time.Second) / rate)
	for n := 0; ctx.Err() == nil; n++ {
		if rand.IntN(10) < 6 {
			a, err := c.call(ctx, []string{"get_zone", "list_rrsets"}[n%2], map[string]any{"zone": zone})
			l.add(classify(a, err))
		} else {
			write(ctx, c, zone, fmt.Sprintf("%s-%d", idOf(c.who()), n), l)
		}
		sleep(ctx, pause)
	}
}

func (c *caller) who() int {
	var i int
	fmt.Sscanf(c.key, "bulwark-cluster-key-%d", &i)
	return i
}

// write creates an RRSet, asks to delete it, confirms with the token, and
// replays the token, recording each step.
func write(ctx context.Context, c *caller, zone, name string, l *ledger) {
	rr := map[string]any{"zone": zone, "name": name, "type": "TXT"}
	add := map[string]any{"zone": zone, "name": name, "type": "TXT", "records": []any{map[string]any{"value": `"w"`}}}
	a, err := c.call(ctx, "add_records", add)
	if k := classify(a, err); k != kindOK {
		l.add(k)
		return
	}
	l.add(kindOK)
	l.mark(l.created, name)
	a, err = c.call(ctx, "delete_rrset", rr)
	tok, _ := a.tokenOf(err)
	if tok == "" {
		l.add(classify(a, err))
		return
	}
	l.add(kindToken)
	rr["confirmToken"] = tok
	a, err = c.call(ctx, "delete_rrset", rr)
	if k := classify(a, err); k != kindOK {
		l.add(k)
		l.mark(l.unsure, name)
		return
	}
	l.add(kindOK)
	l.mark(l.deleted, name)
	a, err = c.call(ctx, "delete_rrset", rr)
	switch k := classify(a, err); {
	case k == kindOK:
		l.add(kindReplayOK)
	case k == kindTool:
		// Refused: with a fresh token for the person to confirm, or
		// not_found from the preview (the RRSet is gone). A second
		// confirmation would show as a second upstream deletion.
		l.add(kindReplayDone)
	default:
		l.add(k)
	}
}

// hasToken reports whether the answer is a tool error carrying a fresh
// confirmation token: the gate refused the call and asks for confirmation.
func (a *answer) hasToken() bool {
	tok, _ := a.tokenOf(nil)
	return tok != ""
}

// tokenOf is the confirmation token of a gated call's answer, if any.
func (a *answer) tokenOf(err error) (string, bool) {
	if err != nil || a == nil || !a.Result.IsError {
		return "", false
	}
	tok, ok := a.Result.StructuredContent["confirmToken"].(string)
	return tok, ok
}

// greedy calls as fast as it can, against the rate limit.
func greedy(ctx context.Context, c *caller, zone string, l *ledger) {
	for ctx.Err() == nil {
		a, err := c.call(ctx, "get_zone", map[string]any{"zone": zone})
		k := classify(a, err)
		if k == kindLimited {
			k = kindGreedyLimit
		}
		l.add(k)
		sleep(ctx, 20*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
