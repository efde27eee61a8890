package kernel

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
)

// One audit record per tools/call. On a session whose client speaks a
// version before 2026-07-28 (stdio, an HTTP session), the go-sdk answers a
// handler's input_required itself, inside the same tools/call: it asks the
// client with real requests and runs the tool again with the answers
// (its serverMultiRoundTripMiddleware, which every kernel middleware wraps).
// Each round goes through the tool layer; its record is held here, and the
// tools/call writes one: the last round's, timed from the first.

// heldKey is the context key of a tools/call's held record.
type heldKey struct{}

type heldRecord struct {
	mu  sync.Mutex
	rec *audit.Record
}

// oneRecordMiddleware holds the records of a tools/call that the go-sdk may
// run in several rounds, and writes the last.
func (s *Server) oneRecordMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" || !sdkRunsRounds(req) {
			return next(ctx, method, req)
		}
		h := &heldRecord{}
		res, err := next(context.WithValue(ctx, heldKey{}, h), method, req)
		h.mu.Lock()
		rec := h.rec
		h.mu.Unlock()
		if rec != nil {
			s.audit.Write(ctx, *rec)
		}
		return res, err
	}
}

// sdkRunsRounds reports whether the go-sdk answers an input_required result
// of this request itself (a session of a client before 2026-07-28).
func sdkRunsRounds(req mcp.Request) bool {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && !httpguard.IsModernVersion(ip.ProtocolVersion)
}

// writeCallRecord writes the tool layer's record of a call, or holds it
// when its tools/call may have another round (oneRecordMiddleware).
func (s *Server) writeCallRecord(ctx context.Context, rec audit.Record) {
	h, ok := ctx.Value(heldKey{}).(*heldRecord)
	if !ok {
		s.audit.Write(ctx, rec)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rec != nil { // a later round: the call began with the first
		rec.Duration += rec.Time.Sub(h.rec.Time)
		rec.Time = h.rec.Time
	}
	h.rec = &rec
}
