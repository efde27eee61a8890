package upstream

import "context"

// MaxTracestateLen is the longest tracestate the client forwards.
const MaxTracestateLen = 512

type traceKey struct{}

type trace struct{ parent, state string }

// WithTrace returns ctx carrying W3C trace headers for the upstream calls made
// with it. An invalid traceparent drops both values (a tracestate without a
// traceparent means nothing); an invalid tracestate is dropped alone.
func WithTrace(ctx context.Context, traceparent, tracestate string) context.Context {
	if !ValidTraceparent(traceparent) {
		return context.WithValue(ctx, traceKey{}, trace{})
	}
	if !ValidTracestate(tracestate) {
		tracestate = ""
	}
	return context.WithValue(ctx, traceKey{}, trace{traceparent, tracestate})
}

// TraceFrom returns the trace headers WithTrace stored in ctx, or empty strings.
func TraceFrom(ctx context.Context) (traceparent, tracestate string) {
	t, _ := ctx.Value(traceKey{}).(trace)
	return t.parent, t.state
}

// ValidTraceparent reports whether s is a version-00 W3C traceparent:
// "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>", lower-case hex,
// neither id all zeros. Other versions are not forwarded.
func ValidTraceparent(s string) bool {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return false
	}
	traceID, parentID, flags := s[3:35], s[36:52], s[53:55]
	return lowerHex(traceID) && lowerHex(parentID) && lowerHex(flags) &&
		!allZeros(traceID) && !allZeros(parentID)
}

// ValidTracestate reports whether s may be forwarded: at most
// MaxTracestateLen characters of printable ASCII (no newlines or other
// controls). Empty is valid and means "none".
func ValidTracestate(s string) bool {
	if len(s) > MaxTracestateLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func allZeros(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
