package kernel

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
)

// Multi-round-trip requests (SEP-2322). A handler asks the client for input
// by returning AskInput(requests, state); the kernel answers the call with
// an input-required result whose requestState it seals, and runs the
// handler again when the client retries with the answers (Call.Elicited,
// Call.InputResponses, Call.State). On 2026-07-28 the client retries
// itself; for an older client on a session (stdio) the go-sdk asks it with
// real server-to-client requests and re-invokes the handler. A stateless
// HTTP request of an older protocol has no session to ask on: such a
// client declares no capability, so it is never asked.
//
// requestState comes back from the client, so the kernel treats it as
// attacker input: it is sealed (kernel/seal, purpose purposeRequestState)
// and bound to the principal (the AEAD's associated data), the tool, the
// SHA-256 of the canonical arguments and a lifetime (the confirmation
// issuer's TTL), and it carries a single-use token redeemed through the
// confirmation store (so single use holds across replicas sharing it).
// A state that is tampered with, expired, replayed, another principal's,
// another tool's or for other arguments is refused with -32602 before the
// handler runs, without saying which.

// purposeRequestState is the seal purpose of requestState handles: a handle
// sealed for any other purpose (a device grant, a key at rest) never opens
// as one.
const purposeRequestState = "bulwark-mrtr-request-state"

// stateTarget is the confirmation-store target under which a requestState's
// single-use token is kept. It is not canonical JSON, so it never equals a
// gated tool's target.
const stateTarget = "mrtr requestState"

// CodeInvalidRequestState is the audit's error code of a refused
// requestState; the client gets JSON-RPC -32602.
const CodeInvalidRequestState Code = "invalid_request_state"

// ConfirmationDeclined is the tool error of a gated call the person
// declined (or cancelled) when asked by elicitation: nothing was changed.
const ConfirmationDeclined Code = "confirmation_declined"

// errRequestState is what every refused requestState gets: one message,
// whatever the reason.
var errRequestState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
	Message: "requestState is invalid, expired, already used, or was issued for another call; call the tool again without it"}

// InputRequired is the error a handler returns (through AskInput) to ask
// the client for input before it can finish.
type InputRequired struct {
	// Requests are the questions, by ids the handler chooses.
	Requests mcp.InputRequestMap
	// State is the handler's own data for the next round, returned by
	// Call.State once the client comes back; nil for none. At most 4 KiB.
	State []byte
}

func (e *InputRequired) Error() string { return "input required from the client" }

// maxHandlerState caps InputRequired.State.
const maxHandlerState = 4 << 10

// AskInput returns the error a handler returns to ask the client for the
// input in requests (elicitation, sampling, roots). Ask only for what
// Call.ClientCapabilities declares: the kernel refuses to send the rest.
func AskInput(requests mcp.InputRequestMap, state []byte) error {
	return &InputRequired{Requests: requests, State: state}
}

// requestState is what a sealed requestState holds.
type requestState struct {
	Kind  string `json:"k"`           // stateTool or stateConsent
	Tool  string `json:"t"`           // the tool it was issued for
	Args  string `json:"a"`           // hex SHA-256 of the canonical arguments
	Token string `json:"n"`           // single-use token in the confirmation store
	Bind  string `json:"b,omitempty"` // consent: hex digest of the gate's binding
	OK    bool   `json:"ok,omitempty"`
	Data  []byte `json:"d,omitempty"` // the handler's State
}

const (
	stateTool    = "tool"    // a handler asked
	stateConsent = "consent" // the confirmation gate asked the person
)

// ClientCapabilities returns what the calling client declared: in the
// request's _meta on 2026-07-28, at initialize before. It is nil when
// unknown (a stateless HTTP request of an older protocol).
func (c *Call) ClientCapabilities() *mcp.ClientCapabilities {
	if c.req == nil || c.req.Params == nil {
		return nil
	}
	return c.req.ClientCapabilities()
}

// InputResponses returns the answers the client sent to an earlier
// AskInput, by id; nil on a first call.
func (c *Call) InputResponses() mcp.InputResponseMap {
	if c.req == nil || c.req.Params == nil {
		return nil
	}
	return c.req.Params.InputResponses
}

// Elicited returns the client's answer to the elicitation asked under id.
func (c *Call) Elicited(id string) (*mcp.ElicitResult, bool) {
	r, ok := c.InputResponses()[id].(*mcp.ElicitResult)
	return r, ok && r != nil
}

// State returns the State the handler gave AskInput in the previous round,
// once the kernel has verified the requestState that carried it; nil on a
// first call.
func (c *Call) State() []byte {
	if c.state == nil || c.state.Kind != stateTool {
		return nil
	}
	return c.state.Data
}

// elicitsForm reports whether caps declare form elicitation (an empty
// elicitation object means form, for backward compatibility).
func elicitsForm(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// undeclared returns the method of the first request the client did not
// declare the capability for, or "".
func undeclared(caps *mcp.ClientCapabilities, reqs mcp.InputRequestMap) string {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	for _, r := range reqs {
		switch p := r.(type) {
		case *mcp.ElicitParams:
			if caps.Elicitation == nil || (p.Mode == "url" && caps.Elicitation.URL == nil) ||
				(p.Mode != "url" && !elicitsForm(caps)) {
				return "elicitation/create"
			}
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
			if caps.Sampling == nil {
				return "sampling/createMessage"
			}
		case *mcp.ListRootsParams:
			if caps.RootsV2 == nil && !caps.Roots.ListChanged { // a legacy "roots": {} cannot be told from none
				return "roots/list"
			}
		default:
			return fmt.Sprintf("%T", r)
		}
	}
	return ""
}

// MayAsk reports whether the calling client declared the capability r
// needs, by the rule AskInput enforces. A handler that relays another
// party's request (the gateway) answers that party itself when it may not.
func (c *Call) MayAsk(r mcp.InputRequest) bool {
	return undeclared(c.ClientCapabilities(), mcp.InputRequestMap{"r": r}) == ""
}

// argsSum is the hex SHA-256 of the canonical arguments (confirm.CanonicalValue)
// a state binds: confirm.Fingerprint's, in hex.
func argsSum(canon []byte) string {
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// stateBinding is what a state's single-use token is bound to.
func stateBinding(call *Call, st *requestState) confirm.Binding {
	b := confirm.Binding{Principal: call.Principal.ID, Tool: st.Tool, Target: stateTarget}
	if sum, err := hex.DecodeString(st.Args); err == nil && len(sum) == len(b.Payload) {
		copy(b.Payload[:], sum)
	}
	return b
}

// openState verifies the call's requestState, if any, and spends it. It
// returns nil without one; errRequestState for every refusal; a tool error
// when the shared store fails (fail closed).
func (s *Server) openState(ctx context.Context, call *Call, args string) (*requestState, error) {
	if call.req == nil || call.req.Params == nil || call.req.Params.RequestState == "" {
		return nil, nil
	}
	raw, err := s.sealer.OpenFor(purposeRequestState, call.Principal.ID, call.req.Params.RequestState)
	if err != nil {
		return nil, errRequestState
	}
	var st requestState
	if json.Unmarshal(raw, &st) != nil || st.Tool != call.Tool || st.Args != args {
		return nil, errRequestState
	}
	switch err := s.issuer.Redeem(ctx, stateBinding(call, &st), st.Token); {
	case errors.Is(err, confirm.ErrRefused):
		return nil, errRequestState
	case err != nil:
		return nil, s.storeFailed(ctx, fmt.Errorf("redeeming a requestState: %w", err))
	}
	s.outage.recovered(ctx, s.logger)
	return &st, nil
}

// sealState issues st's single-use token and seals it for the caller.
func (s *Server) sealState(ctx context.Context, call *Call, st requestState) (string, error) {
	if len(st.Data) > maxHandlerState {
		return "", fmt.Errorf("tool %s: the state given to AskInput holds %d bytes, at most %d", call.Tool, len(st.Data), maxHandlerState)
	}
	st.Tool = call.Tool
	tok, err := s.issuer.Issue(ctx, stateBinding(call, &st))
	if err != nil {
		return "", s.storeFailed(ctx, fmt.Errorf("issuing a requestState: %w", err))
	}
	s.outage.recovered(ctx, s.logger)
	st.Token = tok
	payload, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return s.sealer.SealFor(purposeRequestState, call.Principal.ID, payload, s.issuer.TTL())
}

// inputRequired is the result that asks: the requests and the sealed state,
// no content (the go-sdk marks it input_required on 2026-07-28, or asks an
// older client over its session).
func (s *Server) inputRequired(ctx context.Context, call *Call, ir *InputRequired, st requestState) (*mcp.CallToolResult, error) {
	if len(ir.Requests) == 0 {
		return nil, fmt.Errorf("tool %s: AskInput without requests", call.Tool)
	}
	if m := undeclared(call.ClientCapabilities(), ir.Requests); m != "" {
		return nil, Errorf(FailedPrecondition, "This tool needs to ask the client (%s), and the client did not declare that capability.", m).
			WithHint("Use a client that declares it, or a tool that does not ask.")
	}
	// A question that holds a secret in play, in any form the egress gate
	// finds, is withheld rather than sent with holes in it: a question
	// with [redacted] in it could mislead the person who answers.
	if call.secrets.Len() > 0 {
		raw, err := json.Marshal(ir.Requests)
		if err != nil {
			return nil, fmt.Errorf("tool %s: encoding its input requests: %w", call.Tool, err)
		}
		if _, rep, err := egress.Message(raw, call.secrets); err != nil || rep.Redacted > 0 {
			return nil, Errorf(UpstreamError, "This tool's question to the client held a credential, so it was not sent.").
				WithHint("Nothing was asked and nothing changed; report it to the operator.")
		}
	}
	state, err := s.sealState(ctx, call, st)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: ir.Requests, RequestState: state}, nil
}

// newSealer is the default requestState sealer: a random key of this
// process. Replicas behind a load balancer must share one
// (Options.Sealer), or a retry that reaches another replica is refused.
func newSealer(now func() time.Time) (*seal.Sealer, error) {
	key := make([]byte, 32)
	if _, err := io.ReadFull(rand.Reader, key); err != nil {
		return nil, err
	}
	return seal.New(key, &seal.Options{Now: now})
}

// AsksInput declares that the tool's handler may return AskInput. A
// handler that asks without it fails with an internal error: the HTTP fast
// path answers the other tools itself, and only the go-sdk's path marks an
// input-required result.
func (t Tool) AsksInput() Tool {
	t.asks = true
	return t
}

// mayAskNow reports whether a call of t with this _meta may answer
// input_required: its handler asks, or its gate may ask the person (the
// request declares elicitation). The HTTP fast path leaves such calls to
// the go-sdk, the one that marks the result.
func (t *Tool) mayAskNow(meta json.RawMessage) bool {
	if t.asks {
		return true
	}
	if !t.policy.Confirm.Gated() || len(meta) == 0 {
		return false
	}
	var m struct {
		Caps *struct {
			Elicitation json.RawMessage `json:"elicitation"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	// Undecodable: the go-sdk decides.
	return json.Unmarshal(meta, &m) != nil || (m.Caps != nil && m.Caps.Elicitation != nil)
}

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
