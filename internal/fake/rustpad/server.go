package rustpad

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// Server is a running fake Rustpad on 127.0.0.1.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:40123.
	URL string

	ts     *httptest.Server
	ctx    context.Context
	cancel context.CancelFunc
	start  int64

	mu      sync.Mutex
	pads    map[string]*pad
	hostile Hostile
}

// New starts a fake Rustpad on a loopback port. Close it when done.
func New() *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ctx: ctx, cancel: cancel, start: time.Now().Unix(), pads: map[string]*pad{}}
	s.ts = httptest.NewUnstartedServer(s)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("rustpad fake: listen on loopback: %v", err))
	}
	s.ts.Listener = l
	s.ts.Start()
	s.URL = s.ts.URL
	return s
}

// Start is New for tests: the server is closed when tb ends.
func Start(tb testing.TB) *Server {
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// Close drops every connection and stops the server; it returns once all
// connection goroutines have ended.
func (s *Server) Close() {
	s.cancel()
	s.ts.Close() // waits for every handler, and so every connection, to end

}

// SetHostile sets the behaviour of connections opened from now on; the
// zero Hostile restores the faithful server. Safe for concurrent use.
func (s *Server) SetHostile(h Hostile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hostile = h
}

func (s *Server) currentHostile() Hostile {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hostile
}

// pad returns the pad with this id, creating it when create is set.
func (s *Server) pad(id string, create bool) *pad {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pads[id]
	if p == nil && create {
		p = newPad()
		s.pads[id] = p
	}
	return p
}

// Text returns a pad's current text ("" for an unknown pad).
func (s *Server) Text(padID string) string {
	text, _ := s.State(padID)
	return text
}

// State returns a pad's text and revision (number of operations).
func (s *Server) State(padID string) (text string, revision int) {
	if p := s.pad(padID, false); p != nil {
		return p.snapshot()
	}
	return "", 0
}

// Connections returns how many sockets are open on a pad.
func (s *Server) Connections(padID string) int {
	if p := s.pad(padID, false); p != nil {
		return p.connections()
	}
	return 0
}

// Restore creates a pad as the server loads it from its database: one
// operation inserting text ([] when empty) by author u64::MAX. It replaces
// any pad with that id that has no connections.
func (s *Server) Restore(padID, text string) error {
	op := ot.New().Insert(text)
	if err := op.Err(); err != nil {
		return fmt.Errorf("restoring pad: %w", err)
	}
	p := newPad()
	p.text = text
	p.ops = []entry{{id: RestoredID, op: op}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.pads[padID]; old != nil && old.connections() > 0 {
		return fmt.Errorf("restoring pad %q: it has open connections", padID)
	}
	s.pads[padID] = p
	return nil
}

// ServeHTTP routes like the server: the raw (still escaped) path segment is
// the pad id; empty or extra segments and unknown paths are 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if path == "/api/stats" {
		s.serveStats(w)
		return
	}
	if id, ok := segment(path, "/api/text/"); ok {
		s.serveText(w, id)
		return
	}
	if id, ok := segment(path, "/api/socket/"); ok {
		s.serveSocket(w, r, id)
		return
	}
	http.NotFound(w, r)
}

func segment(path, prefix string) (string, bool) {
	id, ok := strings.CutPrefix(path, prefix)
	return id, ok && id != "" && !strings.Contains(id, "/")
}

func (s *Server) serveText(w http.ResponseWriter, id string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(s.Text(id)))
}

func (s *Server) serveStats(w http.ResponseWriter) {
	s.mu.Lock()
	n := len(s.pads)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"start_time":%d,"num_documents":%d,"database_size":0}`, s.start, n)
}
