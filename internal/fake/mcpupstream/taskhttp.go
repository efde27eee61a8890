package mcpupstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// TaskHandler is the fake as a task receiver of MCP 2025-11-25 over
// Streamable HTTP (what TasksVar makes it over stdio): h, the go-sdk's
// handler of a server made with Options.Tasks and Versions
// {"2025-11-25"}, has its initialize and tools/list answers patched as
// over stdio, and the task requests are answered here, as JSON bodies.
// A task request must carry an Mcp-Session-Id h issued and
// Mcp-Protocol-Version 2025-11-25 (HTTP 400 otherwise).
// notifications/tasks/status is not sent: there is no stream for it.
func TaskHandler(h http.Handler) http.Handler {
	t := &taskHTTP{h: h, sessions: map[string]bool{}, wait: map[string]chan []byte{}}
	t.f = &taskFilter{out: replyRouter{t}, tasks: map[string]*fakeTask{}}
	return t
}

type taskHTTP struct {
	h        http.Handler
	f        *taskFilter
	mu       sync.Mutex
	sessions map[string]bool
	wait     map[string]chan []byte // request id -> its answer
}

// replyRouter hands each answer the filter writes to the request waiting
// for it (others, such as status notifications, go nowhere).
type replyRouter struct{ t *taskHTTP }

func (r replyRouter) Write(p []byte) (int, error) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(p, &m) == nil && len(m.ID) > 0 {
		r.t.mu.Lock()
		ch := r.t.wait[string(m.ID)]
		delete(r.t.wait, string(m.ID))
		r.t.mu.Unlock()
		if ch != nil {
			ch <- bytes.TrimSpace(p)
		}
	}
	return len(p), nil
}

func (t *taskHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		t.h.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var m taskMsg
	isTask := json.Unmarshal(body, &m) == nil && len(m.ID) > 0 &&
		((m.Method == "tools/call" && len(m.Params.Task) > 0) || m.Method == "tasks/get" || m.Method == "tasks/result" || m.Method == "tasks/list" || m.Method == "tasks/cancel")
	if isTask {
		t.mu.Lock()
		known := t.sessions[r.Header.Get("Mcp-Session-Id")]
		t.mu.Unlock()
		if !known || r.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
			http.Error(w, "task request outside a 2025-11-25 session", http.StatusBadRequest)
			return
		}
		ch := make(chan []byte, 1)
		t.mu.Lock()
		t.wait[string(m.ID)] = ch
		t.mu.Unlock()
		t.f.handle(body)
		select {
		case answer := <-ch:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(answer)
		case <-r.Context().Done():
			t.mu.Lock()
			delete(t.wait, string(m.ID))
			t.mu.Unlock()
		}
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if sid := rec.Header().Get("Mcp-Session-Id"); sid != "" {
		t.mu.Lock()
		t.sessions[sid] = true
		t.mu.Unlock()
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	out := patchTasks(rec.Body.Bytes())
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(out)
}
