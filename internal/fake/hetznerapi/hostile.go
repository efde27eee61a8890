package hetznerapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FaultKind selects what a Fault does.
type FaultKind int

// Fault kinds.
const (
	// FaultError answers a documented JSON error (Code, Message; Status
	// defaults to the code's status), after rate limiting and auth.
	FaultError FaultKind = iota + 1
	// FaultHTML answers an HTML page, as a proxy would (Status default 502,
	// Body default an nginx-style page).
	FaultHTML
	// FaultRedirect answers Status (default 307) with Location.
	FaultRedirect
	// FaultSlow waits Delay before handling the request normally; it gives
	// up when the client goes away or the Server is closed.
	FaultSlow
	// FaultOversized streams Size bytes of valid-looking JSON with status
	// 200, never holding them in memory.
	FaultOversized
	// FaultRaw answers Status (default 200) with ContentType and Body
	// verbatim: malformed JSON, a non-JSON content type, ...
	FaultRaw
)

// Fault is a hostile switch for matching requests. Faults fire in the
// order added; proxy-like kinds (HTML, redirect, oversized, raw) carry no
// RateLimit or correlation headers.
type Fault struct {
	Kind FaultKind
	// Method and PathPrefix (escaped path, e.g. "/v1/zones") select
	// requests; empty matches all.
	Method     string
	PathPrefix string
	// Times is how many matching requests the fault hits; 0 = until
	// ClearFaults.
	Times int
	// AfterApply runs the request first (state changes happen) and then
	// replaces the answer: the "502 on a POST that was executed" case.
	AfterApply bool

	Status        int
	Code          string
	Message       string
	Location      string
	Delay         time.Duration
	Size          int64
	DeclareLength bool // send Content-Length: Size with FaultOversized
	ContentType   string
	Body          string
}

type faultRule struct {
	Fault
	left int // remaining hits; -1 = unlimited
}

// DefaultHTMLPage is the body of FaultHTML when Body is empty.
const DefaultHTMLPage = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
	"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

// AddFault installs a hostile switch.
func (s *Server) AddFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	left := f.Times
	if left <= 0 {
		left = -1
	}
	s.faults = append(s.faults, &faultRule{Fault: f, left: left})
}

// ClearFaults removes every hostile switch.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// FailNext makes the next n requests answer the documented error code.
func (s *Server) FailNext(n int, code, message string) {
	s.AddFault(Fault{Kind: FaultError, Times: n, Code: code, Message: message})
}

// takeFault returns the first fault matching r and spends one hit.
func (s *Server) takeFault(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if (f.Method != "" && f.Method != r.Method) || !strings.HasPrefix(r.URL.EscapedPath(), f.PathPrefix) {
			continue
		}
		if f.left > 0 {
			f.left--
			if f.left == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		c := f.Fault
		return &c
	}
	return nil
}

// proxyLike reports whether f answers instead of the API.
func (f *Fault) proxyLike() bool {
	return f.Kind == FaultHTML || f.Kind == FaultRedirect || f.Kind == FaultOversized || f.Kind == FaultRaw
}

// wait sleeps d unless ctx ends or the server closes; false when cut short.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// writeProxy answers as a hostile proxy would.
func (s *Server) writeProxy(w http.ResponseWriter, r *http.Request, f *Fault) {
	switch f.Kind {
	case FaultHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(or(f.Status, http.StatusBadGateway))
		_, _ = w.Write([]byte(orString(f.Body, DefaultHTMLPage)))
	case FaultRedirect:
		w.Header().Set("Location", f.Location)
		w.WriteHeader(or(f.Status, http.StatusTemporaryRedirect))
	case FaultRaw:
		if f.ContentType != "" {
			w.Header().Set("Content-Type", f.ContentType)
		}
		w.WriteHeader(or(f.Status, http.StatusOK))
		_, _ = w.Write([]byte(f.Body))
	case FaultOversized:
		s.streamOversized(w, r, f)
	}
}

const (
	bigPrefix = `{"zones":[`
	bigItem   = `{"id":1,"name":"padding.example.com","mode":"primary","ttl":3600,"labels":{}},`
	bigSuffix = `{"id":2}],"meta":{"pagination":{"page":1,"per_page":25,"previous_page":null,` +
		`"next_page":null,"last_page":1,"total_entries":2}}}`
)

// streamOversized writes f.Size bytes (at least prefix+suffix) of valid
// JSON in 32 KiB chunks, stopping when the client goes away.
func (s *Server) streamOversized(w http.ResponseWriter, r *http.Request, f *Fault) {
	size := max(f.Size, int64(len(bigPrefix)+len(bigSuffix)))
	w.Header().Set("Content-Type", "application/json")
	if f.DeclareLength {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.WriteHeader(http.StatusOK)
	chunk := []byte(strings.Repeat(bigItem, 32<<10/len(bigItem)))
	left := size - int64(len(bigPrefix)) - int64(len(bigSuffix))
	if _, err := w.Write([]byte(bigPrefix)); err != nil {
		return
	}
	for left > 0 && r.Context().Err() == nil {
		n := int64(len(chunk))
		part := chunk
		if left < n {
			part = fill(left)
			n = left
		}
		if _, err := w.Write(part); err != nil {
			return
		}
		left -= n
	}
	_, _ = w.Write([]byte(bigSuffix))
}

// fill returns n bytes: whole items, then blanks.
func fill(n int64) []byte {
	items := strings.Repeat(bigItem, int(n)/len(bigItem))
	return []byte(items + strings.Repeat(" ", int(n)-len(items)))
}

func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
