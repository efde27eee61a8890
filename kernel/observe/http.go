package observe

import (
	"context"
	"encoding/json"
	"net/http"
)

// Values of the guard label of bulwark_refusals_total.
const (
	guardFlood       = "flood"        // per-address flood guard (429)
	guardHost        = "host"         // Host not allowed
	guardCORS        = "cors"         // browser origin not allowed
	guardMethod      = "method"       // not POST
	guardContentType = "content_type" // media type, encoding or Accept
	guardSize        = "size"         // body too large or unreadable
	guardMessage     = "message"      // not a JSON-RPC request, a batch, bad trace headers
	guardHeader      = "header"       // MCP headers disagree with the body
	guardAuth        = "auth"         // authentication refused
	guardLimit       = "limit"        // per-principal call limit
	guardTier        = "tier"         // the principal's plan excludes the tool
	guardStore       = "store"        // the shared store is unreachable
	guardConfirm     = "confirm"      // the confirmation gate (a token was issued)
	guardOther       = "other"
)

// reasonGuards maps the guards' data.error reasons to the guard label.
var reasonGuards = map[string]string{
	"rate_limited":           guardFlood,
	"host_forbidden":         guardHost,
	"cors_forbidden":         guardCORS,
	"method_not_allowed":     guardMethod,
	"unsupported_media_type": guardContentType,
	"unsupported_encoding":   guardContentType,
	"not_acceptable":         guardContentType,
	"body_too_large":         guardSize,
	"bad_body":               guardSize,
	"header_mismatch":        guardHeader,
	"parse_error":            guardMessage,
	"invalid_request":        guardMessage,
	"batch_unsupported":      guardMessage,
}

// HTTP implements kernel.ServerObserver: it counts the requests in flight
// and the refusals of the transport guards (a request refused before it
// reached next).
func (s *server) HTTP(guards func(http.Handler) http.Handler, next http.Handler) http.Handler {
	if s.m == nil {
		return guards(next)
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := r.Context().Value(recorderKey{}).(*recorder); ok {
			rec.passed = true
		}
		next.ServeHTTP(w, r)
	})
	h := guards(inner)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.m.httpInFlight.Inc()
		defer s.m.httpInFlight.Dec()
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), recorderKey{}, rec)))
		if !rec.passed && rec.status >= 400 {
			g := guardOf(rec.status, rec.head)
			s.m.refusals.WithLabelValues(s.m.name, g).Inc()
			if g == guardFlood {
				s.m.rateLimited.WithLabelValues(s.m.name, scopeAddress).Inc()
			}
		}
	})
}

// guardOf names the guard from a refusal's status and the start of its
// body: the guards' JSON-RPC error carries a fixed reason in data.error;
// authentication answers {"error": kind} or a bare 401.
func guardOf(status int, head []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(head, &body) == nil && len(body.Error) > 0 {
		if body.Error[0] == '"' {
			return guardAuth
		}
		var e struct {
			Data struct {
				Error string `json:"error"`
			} `json:"data"`
		}
		if json.Unmarshal(body.Error, &e) == nil {
			if g, ok := reasonGuards[e.Data.Error]; ok {
				return g
			}
		}
	}
	if status == http.StatusUnauthorized {
		return guardAuth
	}
	return guardOther
}

type recorderKey struct{}

// maxHead bounds the refusal body kept to classify it; the guards' bodies
// are well under it.
const maxHead = 1024

// recorder notes the status of a response and, for a refusal before the
// guards let the request through, the start of its body.
type recorder struct {
	http.ResponseWriter
	status int
	passed bool
	head   []byte
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if !r.passed && r.status >= 400 && len(r.head) < maxHead {
		r.head = append(r.head, b[:min(len(b), maxHead-len(r.head))]...)
	}
	return r.ResponseWriter.Write(b)
}

// Flush keeps event streams streaming.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
