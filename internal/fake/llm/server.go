package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// CompletionsPath is the one route the fake serves, under URL().
const CompletionsPath = "/chat/completions"

// Options configures a Server. The zero value (or nil) is usable.
type Options struct {
	// APIKey, when set, is the only accepted "Authorization: Bearer" value;
	// anything else gets 401 in OpenAI's error shape. Empty accepts any
	// Bearer token but still requires one.
	APIKey string
	// Mode is the starting behaviour; ModeSchema when zero.
	Mode Mode
	// Delay is how long ModeSlow waits before answering; 30 s when zero.
	Delay time.Duration
	// OversizeBytes is the size of ModeOversized's content; 4 MiB when zero.
	OversizeBytes int
}

// Server is the fake model endpoint on a loopback port. Safe for
// concurrent use.
type Server struct {
	opts Options
	ts   *httptest.Server
	done chan struct{}
	once sync.Once

	mu       sync.Mutex
	mode     Mode
	script   []Mode
	content  *string
	requests []Request
	calls    int
}

// New starts a fake on 127.0.0.1. opts may be nil; call Close when done.
func New(opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Delay <= 0 {
		o.Delay = 30 * time.Second
	}
	if o.OversizeBytes <= 0 {
		o.OversizeBytes = 4 << 20
	}
	if o.Mode == 0 {
		o.Mode = ModeSchema
	}
	s := &Server{opts: o, mode: o.Mode, done: make(chan struct{})}
	s.ts = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("llm fake: listen on loopback: %v", err))
	}
	s.ts.Listener = l
	s.ts.Start()
	return s
}

// Start is New for tests: the fake closes when tb ends.
func Start(tb testing.TB, opts *Options) *Server {
	tb.Helper()
	s := New(opts)
	tb.Cleanup(s.Close)
	return s
}

// URL is the OpenAI-style base URL, "http://127.0.0.1:P/v1"; clients POST
// to URL()+CompletionsPath.
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Close ends slow answers and stops the server; safe to call twice.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.ts.CloseClientConnections()
		s.ts.Close()
	})
}

// SetMode sets the behaviour for the following requests.
func (s *Server) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// Script queues modes for the next requests, one each, before the mode set
// with SetMode applies again.
func (s *Server) Script(modes ...Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, modes...)
}

// SetContent makes every following answer a normal completion whose
// message content is exactly content, whatever the mode. SetContent("")
// with ClearContent restores the modes.
func (s *Server) SetContent(content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.content = &content
}

// ClearContent undoes SetContent.
func (s *Server) ClearContent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.content = nil
}

// Message is one chat message as received. Content is the text of a
// string content, or of the text parts of an array content.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"-"`
	Name    string `json:"name,omitempty"`
}

// ChatRequest is the parsed body of a request.
type ChatRequest struct {
	Model          string
	Messages       []Message
	ResponseFormat json.RawMessage // as sent, nil when absent
	Schema         json.RawMessage // response_format.json_schema.schema, nil when absent
	Tools          json.RawMessage // as sent, nil when absent
	ToolChoice     json.RawMessage
	Stream         bool
}

// Request is one request as the fake received it. Header has Authorization
// redacted to its scheme; Contains searches the unredacted request.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	Chat         ChatRequest // zero when the body did not parse
	Mode         Mode        // the behaviour that answered
	rawAuth      string
}

// System is the text of every system (or developer) message, joined by
// newlines.
func (r Request) System() string {
	return r.join(func(role string) bool { return role == "system" || role == "developer" })
}

// NonSystem is the text of every other message, joined by newlines.
func (r Request) NonSystem() string {
	return r.join(func(role string) bool { return role != "system" && role != "developer" })
}

func (r Request) join(keep func(string) bool) string {
	var parts []string
	for _, m := range r.Chat.Messages {
		if keep(m.Role) {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// Untrusted-data delimiters (kernel/untrusted's envelope).
const (
	openTag  = "<untrusted-data"
	closeTag = "</untrusted-data>"
)

// OnlyInsideUntrusted reports whether needle occurs in the request's
// messages, never in a system message, and every occurrence lies inside an
// <untrusted-data …> … </untrusted-data> block. Use a distinctive phrase of
// the injected text as needle (not a tag: the envelope neutralises those).
func (r Request) OnlyInsideUntrusted(needle string) bool {
	if needle == "" || strings.Contains(r.System(), needle) || !strings.Contains(r.NonSystem(), needle) {
		return false
	}
	for _, m := range r.Chat.Messages {
		if !insideEverywhere(m.Content, needle) {
			return false
		}
	}
	return true
}

// insideEverywhere reports whether each occurrence of needle in text is
// between an opening tag and the next closing tag.
func insideEverywhere(text, needle string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], needle)
		if i < 0 {
			return true
		}
		pos := from + i
		before := text[:pos]
		open, closed := strings.LastIndex(before, openTag), strings.LastIndex(before, closeTag)
		if open < 0 || closed > open || !strings.Contains(text[pos+len(needle):], closeTag) {
			return false
		}
		from = pos + len(needle)
	}
}

// Contains reports whether secret appears in the request: path, any header
// value, or body.
func (r Request) Contains(secret string) bool {
	if secret == "" {
		return false
	}
	if strings.Contains(r.Path, secret) || strings.Contains(r.rawAuth, secret) || bytes.Contains(r.Body, []byte(secret)) {
		return true
	}
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, secret) {
				return true
			}
		}
	}
	return false
}

// Requests returns copies of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header, r.Body = r.Header.Clone(), bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

// maxBody caps how much of a request body the fake reads.
const maxBody = 16 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := Request{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body,
		rawAuth: r.Header.Get("Authorization")}
	if v := rec.Header.Get("Authorization"); v != "" {
		scheme, _, _ := strings.Cut(v, " ")
		rec.Header.Set("Authorization", scheme+" [redacted]")
	}
	chat, perr := parseChat(body)
	rec.Chat = chat
	s.mu.Lock()
	idx := len(s.requests)
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	status, msg := s.check(r, perr, chat)
	if status != 0 {
		writeError(w, status, msg)
		return
	}
	mode, content := s.next()
	s.mu.Lock()
	s.requests[idx].Mode = mode
	s.mu.Unlock()
	s.answer(w, r, chat, mode, content)
}

// check applies the refusals of the real endpoint: route, method, auth,
// content type and body shape.
func (s *Server) check(r *http.Request, perr error, chat ChatRequest) (int, string) {
	switch {
	case r.URL.Path != "/v1"+CompletionsPath:
		return http.StatusNotFound, "Unknown request URL: " + r.Method + " " + r.URL.Path
	case r.Method != http.MethodPost:
		return http.StatusMethodNotAllowed, "Method not allowed"
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" || (s.opts.APIKey != "" && tok != s.opts.APIKey) {
		return http.StatusUnauthorized, "Incorrect API key provided"
	}
	switch {
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		return http.StatusBadRequest, "Content-Type must be application/json"
	case perr != nil:
		return http.StatusBadRequest, "We could not parse the JSON body of your request"
	case chat.Model == "":
		return http.StatusBadRequest, "you must provide a model parameter"
	case len(chat.Messages) == 0:
		return http.StatusBadRequest, "'messages' must contain at least one message"
	case chat.Stream:
		return http.StatusBadRequest, "the fake does not stream; send stream: false"
	}
	return 0, ""
}

// next picks the behaviour of one request: SetContent, then the script,
// then the mode.
func (s *Server) next() (Mode, *string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.content != nil {
		c := *s.content
		return ModeContent, &c
	}
	if len(s.script) > 0 {
		m := s.script[0]
		s.script = s.script[1:]
		return m, nil
	}
	return s.mode, nil
}

func parseChat(body []byte) (ChatRequest, error) {
	var raw struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Name    string          `json:"name"`
		} `json:"messages"`
		ResponseFormat json.RawMessage `json:"response_format"`
		Tools          json.RawMessage `json:"tools"`
		ToolChoice     json.RawMessage `json:"tool_choice"`
		Stream         bool            `json:"stream"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return ChatRequest{}, err
	}
	c := ChatRequest{Model: raw.Model, ResponseFormat: raw.ResponseFormat, Tools: raw.Tools,
		ToolChoice: raw.ToolChoice, Stream: raw.Stream}
	for _, m := range raw.Messages {
		c.Messages = append(c.Messages, Message{Role: m.Role, Content: contentText(m.Content), Name: m.Name})
	}
	var rf struct {
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if len(raw.ResponseFormat) > 0 && json.Unmarshal(raw.ResponseFormat, &rf) == nil {
		c.Schema = rf.JSONSchema.Schema
	}
	return c, nil
}

// contentText flattens a string content or an array of {type:"text",text}
// parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

// writeError answers OpenAI's error shape.
func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	switch status {
	case http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case http.StatusInternalServerError:
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
