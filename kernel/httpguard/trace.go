package httpguard

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// MaxTracestateLen caps the tracestate header bulwark accepts and forwards:
// W3C asks vendors to propagate at least 512 characters; longer is dropped.
const MaxTracestateLen = 512

const (
	maxTracestateMembers = 32
	maxTraceparentLen    = 512
)

// Traceparent is a parsed W3C Trace Context (level 1) traceparent header.
// The fields are lowercase hex.
type Traceparent struct {
	Version, TraceID, ParentID, Flags string
}

// ParseTraceparent validates a traceparent header: version, trace-id,
// parent-id and flags in lowercase hex; version not "ff"; ids not all zero;
// exactly 55 characters for version 00, and for later versions anything
// after the first 55 characters introduced by '-'. Errors wrap
// ErrInvalidTraceparent.
func ParseTraceparent(s string) (Traceparent, error) {
	bad := func(what string) (Traceparent, error) {
		return Traceparent{}, fmt.Errorf("%s: %w", what, ErrInvalidTraceparent)
	}
	if len(s) < 55 || len(s) > maxTraceparentLen {
		return bad("length")
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return bad("delimiters")
	}
	tp := Traceparent{Version: s[0:2], TraceID: s[3:35], ParentID: s[36:52], Flags: s[53:55]}
	switch {
	case !lowerHex(tp.Version) || tp.Version == "ff":
		return bad("version")
	case !lowerHex(tp.TraceID) || allZero(tp.TraceID):
		return bad("trace-id")
	case !lowerHex(tp.ParentID) || allZero(tp.ParentID):
		return bad("parent-id")
	case !lowerHex(tp.Flags):
		return bad("flags")
	case tp.Version == "00" && len(s) != 55:
		return bad("version 00 length")
	case len(s) > 55 && (s[55] != '-' || !visibleASCII(s[56:])):
		return bad("future-version suffix")
	}
	return tp, nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// ValidTracestate validates a tracestate header (the members of several
// headers joined by commas): at most MaxTracestateLen characters and 32
// list members, each key=value per W3C Trace Context level 1, keys unique;
// empty members are allowed. Errors wrap ErrInvalidTracestate.
func ValidTracestate(s string) error {
	if len(s) > MaxTracestateLen {
		return fmt.Errorf("over %d characters: %w", MaxTracestateLen, ErrInvalidTracestate)
	}
	var keys [maxTracestateMembers]string
	n := 0
	for rest := s; ; {
		member, tail, more := strings.Cut(rest, ",")
		member = strings.Trim(member, " \t")
		if member != "" {
			if n == maxTracestateMembers {
				return fmt.Errorf("over %d members: %w", maxTracestateMembers, ErrInvalidTracestate)
			}
			key, err := tracestateMember(member)
			if err != nil {
				return err
			}
			for _, k := range keys[:n] {
				if k == key {
					return fmt.Errorf("duplicate key: %w", ErrInvalidTracestate)
				}
			}
			keys[n] = key
			n++
		}
		if !more {
			return nil
		}
		rest = tail
	}
}

func tracestateMember(m string) (key string, err error) {
	key, value, ok := strings.Cut(m, "=")
	if !ok || !validTracestateKey(key) || !validTracestateValue(value) {
		return "", fmt.Errorf("malformed list member: %w", ErrInvalidTracestate)
	}
	return key, nil
}

func keyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '*' || c == '/'
}

func validTracestateKey(k string) bool {
	tenant, system, multi := strings.Cut(k, "@")
	if !multi {
		return len(k) >= 1 && len(k) <= 256 && 'a' <= k[0] && k[0] <= 'z' && allKeyChars(k[1:])
	}
	return len(tenant) >= 1 && len(tenant) <= 241 && (tenant[0] >= 'a' && tenant[0] <= 'z' || tenant[0] >= '0' && tenant[0] <= '9') &&
		allKeyChars(tenant[1:]) &&
		len(system) >= 1 && len(system) <= 14 && 'a' <= system[0] && system[0] <= 'z' && allKeyChars(system[1:])
}

func allKeyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !keyChar(s[i]) {
			return false
		}
	}
	return true
}

// validTracestateValue: 1-256 printable characters except ',' and '=',
// spaces allowed inside but not at the end.
func validTracestateValue(v string) bool {
	if len(v) < 1 || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

// TraceContext is a request's validated trace headers: safe to propagate
// to an upstream as they are.
type TraceContext struct {
	Traceparent string
	Tracestate  string // empty when absent or dropped
}

// Inject sets the trace headers on an outbound request's header.
func (t TraceContext) Inject(h http.Header) {
	if t.Traceparent == "" {
		return
	}
	h.Set("Traceparent", t.Traceparent)
	if t.Tracestate != "" {
		h.Set("Tracestate", t.Tracestate)
	}
}

// TraceFromContext returns the validated trace headers of the request whose
// context this is; ok is false when it had no valid traceparent (or the
// TraceHeaders stage did not run).
func TraceFromContext(ctx context.Context) (TraceContext, bool) {
	st := stateFrom(ctx)
	if st == nil || !st.traceOK {
		return TraceContext{}, false
	}
	return st.trace, true
}

// TraceHeaders validates traceparent and tracestate. It never refuses a
// request: invalid headers are removed so they are never forwarded or
// logged. An invalid (or repeated) traceparent removes tracestate too, as
// W3C requires; several tracestate headers are joined into one.
// The zero value is ready to use.
type TraceHeaders struct{}

// Check reports what Sanitize would remove, without changing anything.
func (TraceHeaders) Check(r *http.Request) error {
	_, err := traceFrom(r.Header)
	return err
}

// Sanitize removes invalid trace headers from h and returns the valid ones.
func (TraceHeaders) Sanitize(h http.Header) (TraceContext, bool) {
	tc, err := traceFrom(h)
	switch {
	case tc.Traceparent == "":
		h.Del("Traceparent")
		h.Del("Tracestate")
		return TraceContext{}, false
	case tc.Tracestate == "" || err != nil:
		h.Del("Tracestate")
	default:
		h.Set("Tracestate", tc.Tracestate)
	}
	return tc, true
}

// traceFrom returns the valid trace context in h and the first problem.
func traceFrom(h http.Header) (TraceContext, error) {
	parents := h.Values("Traceparent")
	if len(parents) == 0 {
		return TraceContext{}, nil
	}
	if len(parents) > 1 {
		return TraceContext{}, fmt.Errorf("repeated header: %w", ErrInvalidTraceparent)
	}
	if _, err := ParseTraceparent(parents[0]); err != nil {
		return TraceContext{}, err
	}
	tc := TraceContext{Traceparent: parents[0]}
	states := h.Values("Tracestate")
	if len(states) == 0 {
		return tc, nil
	}
	state := states[0]
	if len(states) > 1 {
		state = strings.Join(states, ",")
	}
	if err := ValidTracestate(state); err != nil {
		return tc, err
	}
	tc.Tracestate = state
	return tc, nil
}

// Handler sanitizes the trace headers, records the valid ones for
// TraceFromContext, and calls next.
func (t TraceHeaders) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc, ok := t.Sanitize(r.Header)
		if ok {
			var st *reqState
			var created bool
			r, st, created = withState(r)
			if created {
				defer st.release()
			}
			st.trace, st.traceOK = tc, true
		}
		next.ServeHTTP(w, r)
	})
}
