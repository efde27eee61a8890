package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Pinner must see each tool object as it arrived on the wire: the
// go-sdk's mcp.Tool drops members it does not model, so a definition
// re-encoded from it would hide a change to them. rawTransport records the
// raw result of every tools/list response on the upstream's connection;
// listTools takes each tool object from it.
//
// The go-sdk's Streamable HTTP client connection relies on an unexported
// interface a wrapper cannot forward, so for URL upstreams the recording is
// one layer down, in the HTTP client (httplist.go): the same recorder fed
// from the request and response bodies.

// rawLists holds the raw tools/list results of one connection, by request
// id, until listTools takes them.
type rawLists struct {
	mu      sync.Mutex
	asked   map[jsonrpc.ID]bool
	results []json.RawMessage // in the order they arrived
	initID  *jsonrpc.ID       // the initialize request's (tasks.go)
	tasks   upTasks           // what its result declares of tasks
}

// maxPendingLists bounds what an upstream can make the recorder hold.
const maxPendingLists = 4

// asks reports whether msg is a tools/list request (one whose answer the
// recorder keeps).
func (r *rawLists) asks(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && req.Method == "tools/list" && req.IsCall()
}

func (r *rawLists) wrote(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.IsCall() {
		r.mu.Lock()
		id := req.ID
		r.initID, r.tasks = &id, upTasks{}
		r.mu.Unlock()
		return
	}
	if !r.asks(msg) {
		return
	}
	req := msg.(*jsonrpc.Request)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.asked == nil {
		r.asked = map[jsonrpc.ID]bool{}
	}
	r.asked[req.ID] = true
}

func (r *rawLists) read(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.initID != nil && *r.initID == resp.ID {
		r.initID = nil
		if resp.Error == nil {
			r.tasks = parseUpTasks(resp.Result)
		}
		return
	}
	if !r.asked[resp.ID] {
		return
	}
	delete(r.asked, resp.ID)
	if resp.Error != nil {
		return
	}
	if len(r.results) == maxPendingLists {
		r.results = r.results[1:]
	}
	r.results = append(r.results, resp.Result)
}

func (r *rawLists) reset() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = nil
}

// take returns the oldest recorded result, or nil.
func (r *rawLists) take() json.RawMessage {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.results) == 0 {
		return nil
	}
	res := r.results[0]
	r.results = r.results[1:]
	return res
}

type rawTransport struct {
	mcp.Transport
	rec *rawLists
}

func (t rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rawConn{Connection: c, rec: t.rec}, nil
}

type rawConn struct {
	mcp.Connection
	rec *rawLists
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.rec.read(msg)
	}
	return msg, err
}

func (c *rawConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.rec.wrote(msg)
	return c.Connection.Write(ctx, msg)
}

// maxListPages bounds the pages of one tools/list listing: an upstream that
// answers every page with another cursor (empty pages included) is refused
// at once, not at the connect timeout.
const maxListPages = 100

// listTools lists every tool, page by page, within maxTools and
// maxListPages; a cursor the upstream already gave is refused (a loop). Each def's raw
// is the tool object as the upstream sent it when rec recorded the page,
// else the re-encoded mcp.Tool (a page whose raw result did not reach the
// recorder: never, but for a result over the recorder's cap). A name the
// listing gives twice or more has a def without raw (duplicated), which
// checkPins hides with every tool of that name: which of them the go-sdk
// or a client would use is not for the upstream to decide. The link's listMu is held: one
// listing at a time per connection, so the recorded pages are this one's.
func listTools(ctx context.Context, sess *mcp.ClientSession, rec *rawLists) (map[string]def, []string, error) {
	defs := map[string]def{}
	dups := map[string]bool{}
	var order []string
	params := &mcp.ListToolsParams{}
	seen := map[string]bool{}
	for page := 1; ; page++ {
		rec.reset() // a page of an earlier, abandoned listing is not this one's
		res, err := sess.ListTools(ctx, params)
		if err != nil {
			return nil, nil, fmt.Errorf("listing tools: %w", err)
		}
		raws, err := rawTools(rec.take(), len(res.Tools))
		if err != nil {
			return nil, nil, fmt.Errorf("listing tools: %w", err)
		}
		for i, t := range res.Tools {
			if len(defs) == maxTools {
				return nil, nil, fmt.Errorf("listing tools: more than %d", maxTools)
			}
			raw := raws[i]
			if raw == nil || !sameName(raw, t.Name) {
				if raw, err = json.Marshal(t); err != nil {
					return nil, nil, fmt.Errorf("encoding tool %q: %w", t.Name, err)
				}
			}
			if _, dup := defs[t.Name]; dup {
				dups[t.Name] = true
				continue
			}
			order = append(order, t.Name)
			defs[t.Name] = def{tool: t, raw: raw}
		}
		if res.NextCursor == "" {
			for n := range dups {
				defs[n] = def{tool: defs[n].tool} // duplicated
			}
			return defs, order, nil
		}
		if seen[res.NextCursor] {
			return nil, nil, fmt.Errorf("listing tools: the upstream's paging loops (page %d repeats the cursor %.64q)", page, res.NextCursor)
		}
		if page == maxListPages {
			return nil, nil, fmt.Errorf("listing tools: the upstream's paging did not end within %d pages", maxListPages)
		}
		seen[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// rawTools splits a raw tools/list result into its tool objects; nil
// entries where there is no raw result.
func rawTools(result json.RawMessage, n int) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, n)
	if result == nil {
		return out, nil
	}
	var r struct {
		Tools []json.RawMessage `json:"tools"`
	}
	// Members are matched as the go-sdk matches them (sdkUnmarshal, exact
	// case): with encoding/json's case-insensitive matching a result that
	// also holds "TOOLS" would give other objects than the go-sdk decoded.
	// A repeated member is refused: the go-sdk decodes a second "tools"
	// into the tools of the first, merging them, while the objects here
	// would be the second's alone, and the pin would not cover the rest.
	if err := sdkUnmarshal(result, &r); err != nil {
		return nil, err
	}
	if k, ok := repeatedMember(result); ok {
		return nil, fmt.Errorf("the result repeats the member %.64q", k)
	}
	if len(r.Tools) != n {
		return nil, errors.New("the raw result and the decoded one disagree")
	}
	copy(out, r.Tools)
	return out, nil
}

// sameName reports whether the raw tool object is the one the go-sdk
// decoded as name, matching its members as the go-sdk does (exact case):
// an extra "NAME" member must not make the gateway pin the go-sdk's
// re-encoding instead of the wire bytes.
func sameName(raw json.RawMessage, name string) bool {
	var t struct {
		Name string `json:"name"`
	}
	return sdkUnmarshal(raw, &t) == nil && t.Name == name
}

// repeatedMember returns a member name that the JSON object raw holds more
// than once, at its top level.
func repeatedMember(raw json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		k, isKey := t.(string)
		if err != nil || !isKey {
			return "", false
		}
		if seen[k] {
			return k, true
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// duplicated reports whether a listing gave d's name more than once
// (listTools).
func duplicated(d def) bool { return d.raw == nil }
