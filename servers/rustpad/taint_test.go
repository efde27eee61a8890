package rustpad_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	fake "github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
	"github.com/bulwarkmcp/bulwark/internal/taint"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// The Rustpad taint harness. Rustpad takes no credential, so the secret is
// one the server is configured with beside it (a kernel credential, as an
// operator's other token would be); a hostile Rustpad that knows it echoes
// it in every encoding of internal/taint: appended to the text GET
// /api/text answers and to its error bodies, in a member of /api/stats,
// and on the WebSocket appended to every string of the frames it sends
// (the language, user names, the inserts of a History) and in frames the
// session refuses (an unknown variant, a frame that is not JSON); pads
// hold it too, written by another user. The checker reads every byte the
// MCP client received (stdio with and without the fast path, and HTTP),
// the kernel's log and the audit records. Which upstream fields reach a
// client is testdata/taint-coverage.txt.

// padSecret is the credential the server holds and Rustpad echoes.
const padSecret = "rpTAINT-8c1e5b72d94f03a6Q"

// padProxy stands between the server and the fake Rustpad: HTTP routes
// and the WebSocket.
type padProxy struct {
	enc  taint.Encoding
	peer *fake.Server

	mu      sync.Mutex
	tainted map[string]bool
	// What the proxy does to the frames and answers of the calls made
	// while a mode is set.
	keepLanguage bool // Language frames as sent: set_language waits for its own
	history      bool // taint History inserts (reads only: an edit built on them is refused)
	inject       string
	status       int    // answer the /api routes with this status
	contentType  string // and this media type
	requests     int
}

func newPadProxy(enc taint.Encoding, peer *fake.Server) *padProxy {
	return &padProxy{enc: enc, peer: peer, tainted: map[string]bool{}}
}

func (p *padProxy) value(field string) string {
	p.mu.Lock()
	p.tainted[field] = true
	p.mu.Unlock()
	return taint.ValueOf(field, p.enc, padSecret)
}

// set changes the proxy's mode for the calls until the returned function
// restores it.
func (p *padProxy) set(f func(p *padProxy)) func() {
	p.mu.Lock()
	f(p)
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.keepLanguage, p.history, p.inject, p.status, p.contentType = false, false, "", 0, ""
		p.mu.Unlock()
	}
}

func (p *padProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.requests++
	status, ct := p.status, p.contentType
	p.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/api/socket/") {
		p.socket(w, r)
		return
	}
	route := "Rustpad.api.text"
	if r.URL.Path == "/api/stats" {
		route = "Rustpad.api.stats"
	}
	if status != 0 {
		body := p.value(route + ":error")
		if strings.Contains(ct, "json") {
			b, _ := json.Marshal(map[string]any{"error": body, "echo": p.enc.Text(padSecret)})
			body = string(b)
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
		return
	}
	rec := httptest.NewRecorder()
	p.peer.ServeHTTP(rec, r)
	b := rec.Body.Bytes()
	switch {
	case route == "Rustpad.api.stats":
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if d.Decode(&m) == nil {
			m["note"] = p.value(route + ":note")
			m["echo"] = p.enc.Text(padSecret)
			b, _ = json.Marshal(m)
			if p.enc.Wire != nil {
				b = p.enc.Wire(b, p.enc.Text(padSecret))
			}
		}
	case len(b) > 0: // an empty pad stays empty: the server cross-checks it
		b = append(b, []byte("\n"+p.value(route+":body")+"\n")...)
	}
	for k, vs := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(b)
}

// socket relays a WebSocket to the peer, rewriting what the peer sends.
func (p *padProxy) socket(w http.ResponseWriter, r *http.Request) {
	down, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer down.CloseNow()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	up, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(p.peer.URL, "http")+r.URL.RequestURI(), nil)
	if err != nil {
		return
	}
	defer up.CloseNow()
	up.SetReadLimit(64 << 20)
	down.SetReadLimit(64 << 20)
	p.mu.Lock()
	inject := p.inject
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		first := true
		for {
			typ, b, err := up.Read(ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageText {
				b = p.frame(b)
			}
			if down.Write(ctx, typ, b) != nil {
				return
			}
			if first && inject != "" { // after Identity
				first = false
				if down.Write(ctx, websocket.MessageText, p.injected(inject)) != nil {
					return
				}
			}
		}
	}()
	for {
		typ, b, err := down.Read(ctx)
		if err != nil || up.Write(ctx, typ, b) != nil {
			break
		}
	}
	cancel()
	<-done
}

// injected is a frame the session must refuse, holding a hostile value.
func (p *padProxy) injected(kind string) []byte {
	switch kind {
	case "variant":
		b, _ := json.Marshal(map[string]any{p.value("Rustpad.socket:variant"): 0})
		return b
	case "language-number":
		b, _ := json.Marshal(map[string]any{"Language": 7, "note": p.value("Rustpad.socket:extra")})
		return b
	}
	return []byte(p.value("Rustpad.socket:frame"))
}

// frame appends a hostile value to the strings of one frame the peer
// sent: the language, user names and, in history mode, the inserts.
func (p *padProxy) frame(b []byte) []byte {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&m) != nil || len(m) != 1 {
		return b
	}
	p.mu.Lock()
	keepLanguage, history := p.keepLanguage, p.history
	p.mu.Unlock()
	changed := false
	for k, v := range m {
		switch k {
		case "Language":
			if s, ok := v.(string); ok && !keepLanguage {
				m[k], changed = s+" "+p.value("Rustpad.socket:Language"), true
			}
		case "UserInfo":
			if u, ok := v.(map[string]any); ok {
				if info, ok := u["info"].(map[string]any); ok {
					if s, ok := info["name"].(string); ok {
						info["name"], changed = s+" "+p.value("Rustpad.socket:UserInfo.info.name"), true
					}
				}
			}
		case "History":
			h, _ := v.(map[string]any)
			ops, _ := h["operations"].([]any)
			for _, o := range ops {
				e, _ := o.(map[string]any)
				parts, _ := e["operation"].([]any)
				for i, part := range parts {
					if s, ok := part.(string); ok && history {
						parts[i], changed = s+" "+p.value("Rustpad.socket:History.operations.$.operation.$"), true
					}
				}
			}
		}
	}
	if !changed {
		return b
	}
	nb, _ := json.Marshal(m)
	if p.enc.Wire != nil {
		nb = p.enc.Wire(nb, p.enc.Text(padSecret))
	}
	return nb
}

func TestTaintRustpad(t *testing.T) {
	taint.Server(t, "Rustpad", "./servers/rustpad -run TestTaintRustpad", 4, runRustpadEncoding)
}

// runRustpadEncoding runs the harness in encoding enc over stdio (the fast
// path on and off) and HTTP, and returns the fields whose hostile values
// reached a client and the fields the proxy tainted.
func runRustpadEncoding(t *testing.T, enc taint.Encoding) (visited, tainted map[string]bool) {
	var log taint.Buffer // the kernel's log
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	audit := &mcptest.AuditLog{}
	var p *padProxy
	f := newFixture(t, setup{
		kopts: kernel.Options{Logger: logger, Audit: audit,
			Credentials: []kernel.Credential{{Name: "marker", Provider: "Operator", Value: padSecret}}},
		// The /api client's retry of a 502 does not wait.
		http: upstream.New(&upstream.Options{Timeout: 10 * time.Second, MaxBodyBytes: 4 << 20,
			Retry: upstream.RetryPolicy{MaxAttempts: 2}, Sleep: func(context.Context, time.Duration) error { return nil }}),
		proxy: func(peer http.Handler) http.Handler {
			p = newPadProxy(enc, peer.(*fake.Server))
			return http.HandlerFunc(p.serve)
		},
	})
	f.peer.SetHostile(fake.Hostile{Users: 2}) // two more users in every burst, with names
	c := taint.NewChecker(padSecret)
	n := 0
	for _, v := range taint.Versions {
		s := taint.Session{Version: v, Exercise: exerciseRustpad(f, p, enc, &n)}
		taint.OverStdio(t, f.k, s, false, c)
		taint.OverStdio(t, f.k, s, true, c)
		taint.OverHTTP(t, f.k, s, c)
	}
	audited, _ := json.Marshal(audit.Records())
	c.Text("audit", string(audited))
	c.Text("log", string(log.Bytes()))
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.Messages < 150 || p.requests < 150 {
		t.Fatalf("only %d messages read, %d Rustpad requests: the run did not happen", c.Messages, p.requests)
	}
	taint.Report(t, enc, c)
	t.Logf("%d messages read, %d Rustpad requests, %d of %d tainted fields reached a client", c.Messages, p.requests, len(c.Visited), len(p.tainted))
	return c.Visited, maps.Clone(p.tainted)
}

// exerciseRustpad calls every tool — set_document through its
// confirmation round trip — on pads of its own, then each hostile answer.
func exerciseRustpad(f *fixture, p *padProxy, enc taint.Encoding, n *int) func(t *testing.T, cs *mcp.ClientSession) {
	return func(t *testing.T, cs *mcp.ClientSession) {
		*n++
		called := map[string]bool{}
		call := func(tool string, args map[string]any) *mcp.CallToolResult {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			called[tool] = true
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Errorf("%s: %v", tool, err)
				return &mcp.CallToolResult{IsError: true}
			}
			return res
		}
		ok := func(tool string, args map[string]any) *mcp.CallToolResult {
			res := call(tool, args)
			if res.IsError {
				t.Errorf("%s failed: %s", tool, errorCode(res))
			}
			return res
		}
		fresh, held := fmt.Sprintf("fresh-%d", *n), fmt.Sprintf("held-%d", *n)
		// A pad another user wrote: hostile text, the search target below.
		text := "first line\n" + taint.ValueOf("Rustpad.pad:text", enc, padSecret) + "\nlast line\n"
		if err := f.peer.Restore(held, text); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		p.tainted["Rustpad.pad:text"] = true
		p.mu.Unlock()

		undo := p.set(func(p *padProxy) { p.keepLanguage = true })
		ok("create_document", map[string]any{"id": fresh, "text": "hello\n", "language": "markdown"})
		ok("set_language", map[string]any{"id": held, "language": "python"})
		undo()
		ok("get_document", map[string]any{"id": fresh})
		ok("get_document", map[string]any{"id": held})
		ok("get_document", map[string]any{"id": fmt.Sprintf("empty-%d", *n)})
		ok("get_document_info", map[string]any{"id": fresh})
		ok("get_document_info", map[string]any{"id": held})
		ok("get_stats", map[string]any{})
		ok("append_to_document", map[string]any{"id": held, "text": "appended\n"})
		ok("replace_in_document", map[string]any{"id": held, "search": "first line", "replace": "line one"})
		call("replace_in_document", map[string]any{"id": held, "search": "absent text", "replace": "x"})
		res := call("set_document", map[string]any{"id": held, "text": "replaced\n"})
		var s struct {
			ConfirmToken string `json:"confirmToken"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &s)
		if s.ConfirmToken == "" {
			t.Errorf("set_document: no confirmation token (%s)", errorCode(res))
		} else {
			ok("set_document", map[string]any{"id": held, "text": "replaced\n", "confirmToken": s.ConfirmToken})
		}
		ok("set_document", map[string]any{"id": fmt.Sprintf("new-%d", *n), "text": "written at once\n"})

		// A pad longer than a result may be: the envelope cuts its text at
		// untrusted.DefaultMaxResult bytes, ten characters into the secret.
		long := fmt.Sprintf("long-%d", *n)
		head := "@@Rustpad.pad:long@@ "
		filler := strings.Repeat("x", untrusted.DefaultMaxResult-len(head)-10)
		if err := f.peer.Restore(long, filler+head+enc.Text(padSecret)+" "+taint.Closing+"\n"); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		p.tainted["Rustpad.pad:long"] = true
		p.mu.Unlock()
		ok("get_document", map[string]any{"id": long})

		// The inserts of a History, read without writing: a pad of one
		// operation, so that the tainted insert is consistent.
		ro := fmt.Sprintf("read-%d", *n)
		if err := f.peer.Restore(ro, "read only\n"); err != nil {
			t.Fatal(err)
		}
		undo = p.set(func(p *padProxy) { p.history = true })
		ok("get_document_info", map[string]any{"id": ro})
		undo()

		// Frames the session refuses, each holding the secret.
		for _, kind := range []string{"variant", "language-number", "frame"} {
			undo = p.set(func(p *padProxy) { p.inject = kind })
			call("get_document_info", map[string]any{"id": held})
			call("append_to_document", map[string]any{"id": held, "text": "!"})
			undo()
		}

		// The /api routes' error answers.
		for _, st := range []int{http.StatusNotFound, http.StatusInternalServerError, http.StatusBadGateway, http.StatusForbidden} {
			for _, ct := range []string{"text/plain; charset=utf-8", "application/json"} {
				undo = p.set(func(p *padProxy) { p.status, p.contentType = st, ct })
				call("get_document", map[string]any{"id": held})
				call("get_stats", map[string]any{})
				undo()
			}
		}

		// Every tool the server lists was called: a new tool joins the
		// harness with its first test.
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if !called[tool.Name] {
				t.Errorf("the harness never calls %s", tool.Name)
			}
		}
		if len(tools.Tools) < 8 {
			t.Errorf("%d tools listed", len(tools.Tools))
		}
	}
}

// errorCode is a tool error's code, never its text (which holds what the
// hostile peer wrote).
func errorCode(res *mcp.CallToolResult) string {
	var s struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &s)
	return s.Error.Code
}
