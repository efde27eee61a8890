package rustpad

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/session"
)

// pad is an open session on one pad and its state as of the connect
// barrier: the server's text at that moment, never a guess (reference §7).
type pad struct {
	id   string
	sess *session.Session
	st   session.State
}

// open connects to a pad (which makes Rustpad create it in memory if it
// does not exist) and reads its state. A pad that looks empty is
// cross-checked against GET /api/text; if the two disagree the call fails
// closed. The caller closes the pad.
func (s *Server) open(ctx context.Context, id string) (*pad, error) {
	sess, err := session.Dial(ctx, s.base.String(), id, &s.sess)
	if err != nil {
		return nil, s.sessionError(err, id)
	}
	p := &pad{id: id, sess: sess}
	if p.st, err = sess.State(); err != nil {
		p.close()
		return nil, s.sessionError(err, id)
	}
	if p.st.Length == 0 {
		if err := s.checkEmpty(ctx, id); err != nil {
			// Someone may have written between the barrier and the text
			// route: then the session sees that edit arrive shortly. If it
			// does not, the pad's history is being withheld: fail closed.
			if !p.catchUp(ctx) {
				p.close()
				return nil, err
			}
		}
	}
	return p, nil
}

// catchUpWait bounds how long open waits for an edit that the text route
// has already shown to reach the session.
const catchUpWait = time.Second

// catchUp waits briefly for the session to see a pad that is not empty,
// and reports whether it did.
func (p *pad) catchUp(ctx context.Context) bool {
	deadline := time.Now().Add(catchUpWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		st, err := p.sess.State()
		if err != nil {
			return false
		}
		if st.Length > 0 {
			p.st = st
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func (p *pad) close() { _ = p.sess.Close() }

// checkEmpty is the never-edited-pad cross-check: the text route must agree
// that the pad is empty.
func (s *Server) checkEmpty(ctx context.Context, id string) error {
	text, err := s.fetchText(ctx, id)
	if err != nil {
		return err
	}
	if n := utf8.RuneCountInString(text); n > 0 {
		return kernel.Errorf(kernel.Conflict, "Pad %q looked empty on its WebSocket, but Rustpad's text route returned %d character(s); "+
			"refusing to treat it as empty.", id, n).
			WithHint("Another client may have written at this moment, or a proxy delays the pad's history. Call again; read it with get_document first.")
	}
	return nil
}

// observation is what a preview saw of a pad: counts and a fingerprint,
// never the text.
type observation struct {
	length      int
	revision    int
	fingerprint string
	at          time.Time
}

func (s *Server) observe(st session.State) observation {
	return observation{length: st.Length, revision: st.Revision, fingerprint: fingerprint(st.Text), at: s.now()}
}

// fingerprint is the first 16 hex digits of the text's SHA-256, as
// rustpad-mcp binds its confirmations.
func fingerprint(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// apiURL is <base>/api/<route>[/<id>]; id is validated, so it goes on the
// wire byte for byte (Rustpad does not percent-decode it).
func (s *Server) apiURL(route, id string) *url.URL {
	u := *s.base
	suffix := "/api/" + route
	if id != "" {
		suffix += "/" + id
	}
	u.Path += suffix
	if u.RawPath != "" {
		u.RawPath += suffix
	}
	return &u
}

// get performs a GET on an /api route and returns a 2xx body.
func (s *Server) get(ctx context.Context, route, id string) ([]byte, error) {
	resp, err := s.http.Do(ctx, &upstream.Request{URL: s.apiURL(route, id)})
	if err != nil {
		if te := transportError(err); te != nil {
			return nil, te.WithCause(err)
		}
		return nil, err
	}
	if !resp.OK() {
		return nil, statusError(resp)
	}
	return resp.Body, nil
}

// fetchText reads a pad's text from GET /api/text/{id}, which never creates
// a pad: empty, never-created and expired pads all give "".
func (s *Server) fetchText(ctx context.Context, id string) (string, error) {
	body, err := s.get(ctx, "text", id)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(body) {
		return "", kernel.Errorf(kernel.UpstreamError, "Rustpad returned the text of pad %q as invalid UTF-8.", id)
	}
	text := string(body)
	if n := utf8.RuneCountInString(text); n > s.maxDoc {
		return "", kernel.Errorf(kernel.ResourceExhausted, "Pad %q holds %d characters, more than the %d this server reads.", id, n, s.maxDoc)
	}
	return text, nil
}

// stats is the body of GET /api/stats, read strictly.
type stats struct {
	StartTime    uint64 `json:"start_time"`
	NumDocuments uint64 `json:"num_documents"`
	DatabaseSize uint64 `json:"database_size"`
}

// parseStats decodes /api/stats: an object with the three unsigned
// integers; other members are ignored.
func parseStats(body []byte) (stats, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return stats{}, fmt.Errorf("not a JSON object")
	}
	var st stats
	for name, dst := range map[string]*uint64{"start_time": &st.StartTime, "num_documents": &st.NumDocuments, "database_size": &st.DatabaseSize} {
		v, ok := raw[name]
		if !ok {
			return stats{}, fmt.Errorf("missing %s", name)
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return stats{}, fmt.Errorf("%s is not an unsigned integer", name)
		}
	}
	return st, nil
}

// statusError maps a non-2xx answer of an /api route; the body is upstream
// text (cut, HTML dropped) and reaches the client only enveloped.
func statusError(resp *upstream.Response) *kernel.Error {
	text := upstream.SanitizeErrorBody(resp.Header.Get("Content-Type"), resp.Body)
	var e *kernel.Error
	switch resp.StatusCode {
	case http.StatusNotFound:
		e = kernel.Errorf(kernel.UpstreamError, "Rustpad answered 404 on its /api route.").
			WithHint("Check RUSTPAD_URL: it must point at the Rustpad instance itself; a proxy in front of it may not forward /api.")
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		e = kernel.Errorf(kernel.UpstreamUnavailable, "Rustpad is unavailable right now (HTTP %d).", resp.StatusCode).
			WithHint("Retry later; a proxy in front of Rustpad could not reach it.")
	default:
		e = kernel.Errorf(kernel.UpstreamError, "Rustpad answered HTTP %d.", resp.StatusCode)
	}
	return e.WithUpstream(text)
}
