// Package mcptest connects an in-process go-sdk client to a server and
// records the JSON-RPC messages between them, for tests that go through the
// protocol and for golden wire transcripts.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/internal/errorid"
)

// Session is a connected client session whose messages are recorded.
type Session struct {
	*mcp.ClientSession
	rec *recorder

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// Options configure Connect.
type Options struct {
	// Client options, e.g. handlers for progress and log notifications.
	Client *mcp.ClientOptions
	// ProtocolVersion is the version the client asks for ("" for the
	// latest): "2025-11-25" makes a session that initializes, on which the
	// server sends real requests (elicitation/create) instead of
	// input-required results.
	ProtocolVersion string
}

// Server is what Connect serves: a *kernel.Server (through its egress
// gate, as its transports serve it) or a bare *mcp.Server.
type Server interface {
	Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error)
}

// Connect runs srv on an in-memory transport and returns a connected,
// initialized client session. Both ends are closed when the test ends.
func Connect(t testing.TB, srv Server, opts *Options) *Session {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	rec := &recorder{}
	ss, err := srv.Connect(ctx, &recordingTransport{Transport: st, rec: rec}, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	s := &Session{rec: rec}
	var copts mcp.ClientOptions
	if opts != nil && opts.Client != nil {
		copts = *opts.Client
	}
	next := copts.ProgressNotificationHandler
	copts.ProgressNotificationHandler = func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
		s.mu.Lock()
		s.progress = append(s.progress, r.Params)
		s.mu.Unlock()
		if next != nil {
			next(ctx, r)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "v0"}, &copts)
	var sopts *mcp.ClientSessionOptions
	if opts != nil && opts.ProtocolVersion != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: opts.ProtocolVersion}
	}
	cs, err := client.Connect(ctx, ct, sopts)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	s.ClientSession = cs
	s.Reset()
	return s
}

// Progress waits briefly for at least n progress notifications (they are
// delivered beside the result, not before it) and returns all received.
func (s *Session) Progress(n int) []*mcp.ProgressNotificationParams {
	for i := 0; ; i++ {
		s.mu.Lock()
		got := append([]*mcp.ProgressNotificationParams(nil), s.progress...)
		s.mu.Unlock()
		if len(got) >= n || i == 200 {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Call calls a tool and fails the test on a protocol error. Tool errors come
// back as results with IsError set.
func (s *Session) Call(t testing.TB, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// Text returns the concatenated text content of a result.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Structured decodes a result's structured content into v.
func Structured(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

// Reset forgets what was recorded so far.
func (s *Session) Reset() {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	s.rec.buf.Reset()
}

// Transcript returns the messages recorded since the last Reset, one per
// block, "client:" for what the server read and "server:" for what it
// wrote, each JSON indented, with the normalizations applied.
func (s *Session) Transcript(norm ...Normalizer) string {
	s.rec.mu.Lock()
	raw := s.rec.buf.String()
	s.rec.mu.Unlock()
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(raw), "\n") {
		dir, msg, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		who := map[string]string{"read": "client", "write": "server"}[dir]
		if who == "" {
			who = dir
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, []byte(msg), "", "  "); err != nil {
			pretty.WriteString(msg)
		}
		fmt.Fprintf(&b, "%s:\n%s\n", who, pretty.String())
	}
	out := b.String()
	for _, n := range append(norm, defaultNormalizers...) {
		out = n.re.ReplaceAllString(out, n.repl)
	}
	return out
}

// Normalizer replaces what varies between runs (tokens, ids) by a fixed
// placeholder.
type Normalizer struct {
	re   *regexp.Regexp
	repl string
}

// Normalize returns a Normalizer replacing pattern by repl.
func Normalize(pattern, repl string) Normalizer {
	return Normalizer{re: regexp.MustCompile(pattern), repl: repl}
}

// defaultNormalizers hide error ids (tokens are made deterministic instead,
// by the test's confirm.Options.Rand).
var defaultNormalizers = []Normalizer{
	Normalize(`Error id: `+errorid.Pattern, "Error id: <error-id>"),
	Normalize(`"id": "`+errorid.Pattern+`"`, `"id": "<error-id>"`),
}

// Golden compares got with the section named name of the txtar file at
// path, and rewrites the file instead when UPDATE_GOLDEN=1.
func Golden(t testing.TB, path, comment string, sections map[string]string, order []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(strings.TrimSpace(comment) + "\n")
	for _, name := range order {
		fmt.Fprintf(&b, "-- %s --\n%s", name, sections[name])
		if !strings.HasSuffix(sections[name], "\n") {
			b.WriteByte('\n')
		}
	}
	GoldenFile(t, path, b.String())
}

// lineDiff shows the first lines that differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, wl, gl)
		}
	}
	return "(no line differs; check trailing white space)"
}

// recordingTransport records what the server reads when it reads it, and
// what it writes before it sends it, so that the record is complete by the
// time the client sees the answer.
type recordingTransport struct {
	mcp.Transport
	rec *recorder
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, rec: t.rec}, nil
}

type recordingConn struct {
	mcp.Connection
	rec *recorder
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.log("read", msg)
	}
	return msg, err
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.log("write", msg)
	return c.Connection.Write(ctx, msg)
}

func (c *recordingConn) log(dir string, msg jsonrpc.Message) {
	// The handshake's closing notification is read asynchronously, before
	// or after Reset; it is not part of any call, so it is never recorded
	// (a transcript would otherwise hold it in some runs and not others).
	if r, ok := msg.(*jsonrpc.Request); ok && r.Method == "notifications/initialized" {
		return
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return
	}
	fmt.Fprintf(c.rec, "%s: %s\n", dir, data)
}

// CountingReader yields the bytes 0, 1, 2, … in turn. Given to
// confirm.Options.Rand, it makes confirmation tokens the same in every run,
// so that golden transcripts can hold them.
type CountingReader struct {
	mu sync.Mutex
	n  byte
}

func (r *CountingReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range p {
		p[i] = r.n
		r.n++
	}
	return len(p), nil
}

// ConfirmToken returns the token of a confirmation refusal, and fails the
// test when res is not one.
func ConfirmToken(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var s struct {
		ConfirmToken string `json:"confirmToken"`
	}
	Structured(t, res, &s)
	if s.ConfirmToken == "" || !res.IsError {
		t.Fatalf("no confirmation refusal: %s", Text(res))
	}
	return s.ConfirmToken
}

// ToolSnapshots pins each tool's advertised tools/list entry — name,
// title, description, annotations and input schema — against
// dir/<tool>.json, and fails on a snapshot of a tool that no longer exists.
// UPDATE_GOLDEN=1 rewrites the files.
func ToolSnapshots(t testing.TB, s *Session, dir string) {
	t.Helper()
	res, err := s.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	seen := map[string]bool{}
	for _, tool := range res.Tools {
		seen[tool.Name+".json"] = true
		entry := map[string]any{"name": tool.Name, "title": tool.Title, "description": tool.Description,
			"annotations": tool.Annotations, "inputSchema": tool.InputSchema}
		got, err := json.MarshalIndent(entry, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, tool.Name+".json")
		if update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no snapshot (run with UPDATE_GOLDEN=1): %v", tool.Name, err)
			continue
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s: the advertised tool differs from %s (UPDATE_GOLDEN=1 if intended):\n%s", tool.Name, path, lineDiff(string(want), string(got)))
		}
	}
	files, _ := os.ReadDir(dir)
	for _, fi := range files {
		if !seen[fi.Name()] && !update {
			t.Errorf("%s: snapshot of a tool that no longer exists", fi.Name())
		}
	}
}

// GoldenFile compares got with the file at path, and rewrites the file
// instead when UPDATE_GOLDEN=1.
func GoldenFile(t testing.TB, path, got string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run with UPDATE_GOLDEN=1 to create it): %v", path, err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date (UPDATE_GOLDEN=1 regenerates it):\n%s", path, lineDiff(string(want), got))
	}
}

// AuditLog is an audit sink that keeps every record it is given, safe for
// concurrent writes: for a test's kernel.Options.Audit.
type AuditLog struct {
	mu   sync.Mutex
	recs []audit.Record
}

// Write keeps r.
func (l *AuditLog) Write(_ context.Context, r audit.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
}

// Records returns a copy of the records kept so far, in order.
func (l *AuditLog) Records() []audit.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]audit.Record(nil), l.recs...)
}

// Post posts the JSON-RPC message body to the MCP endpoint url as a
// 2025-06-18 client does (JSON in, JSON or an event stream accepted), with
// header's values set over those, and returns the response and its body.
func Post(t testing.TB, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// ServeHTTP serves srv's Streamable HTTP handler, built with opts, on a
// loopback test server whose own address is the handler's Addr (the Host
// check), closed when the test ends, and returns the MCP endpoint's URL.
func ServeHTTP(t testing.TB, srv *kernel.Server, opts kernel.HTTPOptions) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	opts.Addr = ts.Listener.Addr().String()
	h, err := srv.HTTPHandler(opts)
	if err != nil {
		ts.Close()
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL + kernel.MCPPath
}
