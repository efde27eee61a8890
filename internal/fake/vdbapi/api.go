package vdbapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// answer is what a route handler returns: a JSON value, or raw bytes with a
// content type, or a streaming writer.
type answer struct {
	status      int
	body        any
	raw         []byte
	contentType string
	header      map[string]string
	stream      func(w http.ResponseWriter, r *http.Request)
	modified    time.Time // Last-Modified when set
}

func ok(v any) answer { return answer{status: http.StatusOK, body: v} }

// apiErr is a standard error answer {"success":false,"error","details"}.
func apiErr(status int, msg, details string) answer {
	b := map[string]any{"success": false, "error": msg}
	if details != "" {
		b["details"] = details
	}
	return answer{status: status, body: b}
}

func notFound(what string) answer {
	return apiErr(http.StatusNotFound, what+" not found", "")
}

func badRequest(msg string) answer { return apiErr(http.StatusBadRequest, msg, "") }

// tripPrefixes are API-host paths bulwark must never call (reference §9).
var tripPrefixes = []string{APIVersion + "/cli.", APIVersion + "/auth/", APIVersion + "/auth",
	APIVersion + "/crit/", "/v1/uploads/", "/v1/uploads"}

// isTripWire reports whether an API-host request must never happen: any
// method that could write, or a listed route in any spelling a server or
// CDN might normalise to it — the escaped path, the decoded one, the
// decoded one with dot segments resolved, and each lower-cased.
func isTripWire(method string, u *url.URL) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	decoded := u.Path
	if d, err := url.PathUnescape(decoded); err == nil { // double encoding
		decoded = d
	}
	for _, p := range []string{u.EscapedPath(), u.Path, decoded, path.Clean("/" + decoded)} {
		if tripRoute(p) || tripRoute(strings.ToLower(p)) {
			return true
		}
	}
	return false
}

// tripRoute reports whether p is one of the listed routes.
func tripRoute(p string) bool {
	for _, t := range tripPrefixes {
		if p == t || strings.HasPrefix(p, t) && (strings.HasSuffix(t, "/") || strings.HasSuffix(t, ".") ||
			strings.HasPrefix(p[len(t):], "/")) {
			return true
		}
	}
	return false
}

// serveAPI answers the data API. Check order: trip-wire record, /health,
// proxy-like faults, auth (401/403), rate limit (429), other faults,
// route (404/405), cache (304), handler.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, rec *Request) {
	if s.opts.Latency > 0 && !s.wait(r.Context(), s.opts.Latency) {
		w.WriteHeader(StatusClientClosed)
		return
	}
	path := r.URL.EscapedPath()
	if isTripWire(r.Method, r.URL) {
		s.tripWire(rec)
		s.serveTripWire(w, r, rec)
		return
	}
	if path == "/health" && r.Method == http.MethodGet {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
		return
	}
	f := s.takeFault(HostAPI, r)
	if f != nil && f.proxyLike() {
		s.applyFault(w, r, f)
		return
	}
	o, done := s.admit(w, r, rec)
	if done {
		return
	}
	if f != nil && s.applyAuthedFault(w, r, f, o) {
		return
	}
	a := s.route(r, o)
	s.write(w, r, a, f)
}

// admit authenticates and spends the quota; done when it answered.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, rec *Request) (*org, bool) {
	s.mu.Lock()
	o, status, msg := s.authenticateLocked(r)
	if o != nil {
		rec.Org = o.id
	}
	if status != 0 {
		s.mu.Unlock()
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `ApiKey realm="vdb", Bearer realm="vdb"`)
		}
		writeAnswer(w, apiErr(status, msg, ""))
		return nil, true
	}
	limited, retry := s.spendLocked(w.Header(), o)
	s.mu.Unlock()
	if limited {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		writeAnswer(w, apiErr(http.StatusTooManyRequests, "Rate limit exceeded",
			"Daily quota exhausted; it resets at RateLimit-Reset"))
		return nil, true
	}
	return o, false
}

// applyFault answers proxy-like faults (and slow ones on the site host);
// true when it answered.
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f *Fault) bool {
	if f.proxyLike() {
		s.writeProxy(w, r, f)
		return true
	}
	if f.Kind == FaultSlow {
		return !s.wait(r.Context(), f.Delay)
	}
	return false
}

// applyAuthedFault answers the faults that come after authentication.
func (s *Server) applyAuthedFault(w http.ResponseWriter, r *http.Request, f *Fault, o *org) bool {
	if (f.Kind == FaultError || f.Kind == FaultRateLimited) && f.Delay > 0 && !s.wait(r.Context(), f.Delay) {
		return true // the client went away while the failure was slow
	}
	switch f.Kind {
	case FaultError:
		writeErrorShape(w, f, r.URL.EscapedPath())
	case FaultRateLimited:
		s.writeRateLimited(w, f)
	case FaultEndless:
		s.streamEndless(w, r)
	case FaultEchoCredential:
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": "CVE-2021-44228",
			"description": "debug echo: Authorization: " + r.Header.Get("Authorization") + " org=" + o.id,
			"request":     map[string]any{"authorization": r.Header.Get("Authorization"), "orgId": o.id}})
	case FaultSlow:
		return !s.wait(r.Context(), f.Delay)
	default:
		return false
	}
	return true
}

func (s *Server) writeRateLimited(w http.ResponseWriter, f *Fault) {
	secs := or(f.RetryAfterSecs, 30)
	w.Header().Set("RateLimit-Remaining", "0")
	if f.Reset != "" {
		w.Header().Set("RateLimit-Reset", f.Reset)
	}
	switch f.RetryAfter {
	case RetryAfterSeconds:
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	case RetryAfterDate:
		w.Header().Set("Retry-After", s.now().Add(time.Duration(secs)*time.Second).UTC().Format(http.TimeFormat))
	}
	writeAnswer(w, apiErr(http.StatusTooManyRequests, "Rate limit exceeded", ""))
}

func writeErrorShape(w http.ResponseWriter, f *Fault, path string) {
	status := or(f.Status, http.StatusInternalServerError)
	msg := orString(f.Message, http.StatusText(status))
	switch f.Shape {
	case ShapeErrorOnly:
		writeJSON(w, status, map[string]any{"error": msg})
	case ShapeV1NotFound:
		id := path[strings.LastIndex(path, "/")+1:]
		writeJSON(w, status, map[string]any{"error": msg, "identifier": id,
			"details": "No data found in any source", "sourcesAttempted": []string{"nvd", "osv", "ghsa"}})
	case ShapeEmptyError:
		writeJSON(w, status, map[string]any{"success": false, "error": ""})
	case ShapeNonJSON:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(msg + "\n"))
	case ShapeHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(orString(f.Body, DefaultHTMLPage)))
	default:
		writeJSON(w, status, map[string]any{"success": false, "error": msg, "details": "injected failure"})
	}
}

// write sends a handler's answer with the cache headers, honouring
// If-None-Match, and a FaultSlowBody if one matched.
func (s *Server) write(w http.ResponseWriter, r *http.Request, a answer, f *Fault) {
	if f != nil && f.Kind == FaultSlowBody {
		w = &slowWriter{ResponseWriter: w, s: s, ctx: r.Context(), chunk: or(f.ChunkSize, 16),
			delay: f.Delay}
	}
	if a.status >= 400 {
		writeAnswer(w, a)
		return
	}
	s.cacheHeaders(w.Header(), r, a)
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	if a.stream != nil {
		a.stream(w, r)
		return
	}
	body := a.raw
	if body == nil {
		body = mustJSON(a.body)
	}
	if isEnumeration(r.URL.EscapedPath()) {
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if matchETag(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", orString(a.contentType, "application/json"))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(or(a.status, http.StatusOK))
	_, _ = w.Write(body)
}

// matchETag implements If-None-Match: "*" or a comma list of (weak or
// strong) tags.
func matchETag(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// cacheHeaders sets X-Cache (MISS the first time a URL is served, or when
// the client sends Cache-Control: no-cache; HIT after), Cache-Control and
// Last-Modified. The _t parameter is left out of the cache key.
func (s *Server) cacheHeaders(h http.Header, r *http.Request, a answer) {
	q := r.URL.Query()
	q.Del("_t")
	key := r.URL.EscapedPath() + "?" + q.Encode()
	noCache := strings.Contains(strings.ToLower(r.Header.Get("Cache-Control")), "no-cache")
	s.mu.Lock()
	hit := s.seen[key] && !noCache
	s.seen[key] = true
	cc := s.cacheControlLocked(r.URL.EscapedPath())
	s.mu.Unlock()
	if hit {
		h.Set("X-Cache", "HIT")
	} else {
		h.Set("X-Cache", "MISS")
	}
	h.Del("Cache-Control")
	for _, v := range cc {
		h.Add("Cache-Control", v)
	}
	if !a.modified.IsZero() {
		h.Set("Last-Modified", a.modified.UTC().Format(http.TimeFormat))
	}
}

// SetCacheControl makes answers whose path starts with prefix (escaped,
// e.g. "/v2/vuln/") carry Cache-Control: each value on its own header line
// (several values: several lines, as a proxy adding its own would send).
// Longest prefix wins.
func (s *Server) SetCacheControl(prefix string, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cacheCtl[prefix] = values
}

func (s *Server) cacheControlLocked(path string) []string {
	best, val := -1, []string(nil)
	for p, v := range s.cacheCtl {
		if strings.HasPrefix(path, p) && len(p) > best {
			best, val = len(p), v
		}
	}
	if best >= 0 {
		return val
	}
	switch {
	case isEnumeration(path):
		return []string{"public, max-age=3600"}
	case strings.HasPrefix(path, APIVersion+"/vex") || strings.HasSuffix(path, "/vex"):
		return []string{"private, no-store"}
	}
	return []string{"private, max-age=300"}
}

// enumerations are the static catalogue routes the CLI revalidates with
// If-None-Match (reference §5).
var enumerations = map[string]bool{"ecosystems": true, "sources": true, "metric-types": true,
	"fix-distributions": true, "summary": true, "exploit-sources": true, "exploit-types": true}

func isEnumeration(path string) bool {
	rest, ok := strings.CutPrefix(path, APIVersion+"/")
	return ok && enumerations[rest]
}

func writeAnswer(w http.ResponseWriter, a answer) {
	if a.raw != nil {
		w.Header().Set("Content-Type", orString(a.contentType, "application/json"))
		w.WriteHeader(a.status)
		_, _ = w.Write(a.raw)
		return
	}
	writeJSON(w, a.status, a.body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(mustJSON(v))
}

func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("vdbapi fake: encoding an answer: " + err.Error())
	}
	return buf.Bytes()
}

// serveTripWire answers a forbidden route as the real API plausibly would
// (a write "succeeds", a credential route discloses), so a client that
// reaches it is caught both by the record and by what it got back.
func (s *Server) serveTripWire(w http.ResponseWriter, r *http.Request, rec *Request) {
	clean := strings.ToLower(path.Clean("/" + r.URL.Path))
	s.mu.Lock()
	o, status, _ := s.authenticateLocked(r)
	if o != nil {
		rec.Org = o.id
	}
	s.mu.Unlock()
	switch {
	case status != 0:
		writeAnswer(w, apiErr(http.StatusUnauthorized, "Invalid or expired credentials", ""))
	case !tripRoute(clean):
		w.Header().Set("Allow", http.MethodGet)
		writeAnswer(w, apiErr(http.StatusMethodNotAllowed, "Method not allowed", ""))
	case clean == APIVersion+"/auth/api-key":
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "orgId": o.id,
			"apiKey": "0000000000000000000000000000000000000000000000000000000000000000"})
	case r.Method != http.MethodGet && r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodGet)
		writeAnswer(w, apiErr(http.StatusMethodNotAllowed, "Method not allowed", ""))
	default:
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "written": r.Method == http.MethodPost})
	}
}

// TripWire reports whether a request would trip a wire (doc.go,
// "Trip-wires"): a method that could write, or a listed route in any
// spelling a server or CDN might normalise to it. Tests of a client use it
// as an oracle independent of the client's own rules.
func TripWire(method string, u *url.URL) bool { return isTripWire(method, u) }
