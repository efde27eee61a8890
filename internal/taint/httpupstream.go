package taint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// HTTPUpstream is the hostile upstream over Streamable HTTP, in encoding
// enc, with secret: a URL upstream whose tasks the gateway relays. Each
// POSTed request is answered on an event stream holding every message the
// upstream writes while answering it (a task's status notification too);
// notifications and answers get 202. It asks no questions of its own, so
// its tools that ask (t_ask, t_sample…) are not for it: it is for the
// task messages (TestTaintGatewayURLTasks).
func HTTPUpstream(enc Encoding, secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "taint-session")
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var m message
		if err != nil || json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if m.Method == "" || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var buf bytes.Buffer
		u := &upstream{enc: enc, secret: secret, w: bufio.NewWriter(&buf), waits: map[string]chan json.RawMessage{}}
		u.answer(m)
		u.mu.Lock()
		out := bytes.Clone(buf.Bytes())
		u.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for line := range bytes.Lines(out) {
			if line = bytes.TrimSpace(line); len(line) > 0 {
				_, _ = w.Write(append(append([]byte("event: message\ndata: "), line...), "\n\n"...))
			}
		}
	})
}
