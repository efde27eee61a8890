package kernel

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// ConfirmPath chooses how the confirmation gate confirms a gated call.
type ConfirmPath string

// The confirmation paths (Options.ConfirmBy).
const (
	// ConfirmAuto (the zero value) asks the person by elicitation when the
	// calling client declares form elicitation, and otherwise refuses with
	// a payload-bound token the client sends back.
	ConfirmAuto ConfirmPath = "auto"
	// ConfirmElicit only asks the person: a client that does not declare
	// form elicitation cannot call a gated tool (failed_precondition), and
	// no token is issued or accepted.
	ConfirmElicit ConfirmPath = "elicit"
	// ConfirmToken only uses tokens, whatever the client declares.
	ConfirmToken ConfirmPath = "token"
)

// consentID is the id of the gate's elicitation in inputRequests, and
// consentField the boolean the person ticks.
const (
	consentID    = "bulwark_confirm"
	consentField = "confirm"
)

func (p ConfirmPath) valid() bool {
	switch p {
	case "", ConfirmAuto, ConfirmElicit, ConfirmToken:
		return true
	}
	return false
}

// elicits reports whether the gate asks the person for this call.
func (s *Server) elicits(call *Call) bool {
	return s.opts.ConfirmBy != ConfirmToken && elicitsForm(call.ClientCapabilities())
}

// bindingSum is the hex digest of what the person is asked to confirm: the
// same principal, tool, target and payload hash a token is bound to.
func bindingSum(b confirm.Binding) (string, error) {
	sum, err := confirm.Fingerprint(map[string]any{"principal": b.Principal, "tool": b.Tool,
		"target": b.Target, "payload": hex.EncodeToString(b.Payload[:])})
	return hex.EncodeToString(sum[:]), err
}

// consent is the gate by elicitation. It returns nil when the person
// accepted this exact call in the previous round, and otherwise the result
// to send: the question (input required) or the refusal of a decline.
func (s *Server) consent(ctx context.Context, call *Call, t *Tool, in any, args map[string]any, pv Preview, b confirm.Binding, rec *audit.Record) *mcp.CallToolResult {
	bind, err := bindingSum(b)
	if err != nil {
		return s.fail(ctx, call, rec, err)
	}
	if st := call.state; st != nil && st.Bind == bind {
		ans, answered := call.Elicited(consentID)
		switch {
		case st.Kind == stateTool && st.OK: // the handler asks after consent
			return s.consented(call, bind, rec)
		case st.Kind != stateConsent || !answered: // ask again
		case ans.Action == "accept" && ans.Content[consentField] == true:
			return s.consented(call, bind, rec)
		default:
			rec.Outcome, rec.ErrorCode, rec.Confirm = audit.Refused, string(ConfirmationDeclined), audit.ConfirmDeclined
			return s.errorResult(declined(ans), "")
		}
	}
	ask := &InputRequired{Requests: mcp.InputRequestMap{consentID: s.consentRequest(t, in, args, pv, b, bind)}}
	res, err := s.inputRequired(ctx, call, ask, requestState{Kind: stateConsent, Args: call.argsSum, Bind: bind})
	if err != nil {
		return s.fail(ctx, call, rec, err)
	}
	rec.Outcome, rec.ErrorCode, rec.Confirm = audit.Refused, "input_required", audit.ConfirmAsked
	return res
}

func (s *Server) consented(call *Call, bind string, rec *audit.Record) *mcp.CallToolResult {
	call.consent = bind
	rec.Confirm = audit.ConfirmElicited
	return nil
}

// declined is the refusal of an answer that does not run the call: the
// person declined, cancelled or left the box unticked, or the answer does
// not fit the form at all (another action, a box that is not a boolean).
func declined(ans *mcp.ElicitResult) *Error {
	word := ""
	switch v, ok := ans.Content[consentField]; {
	case ans.Action == "decline" || ans.Action == "cancel":
		word = ans.Action + "d"
	case ans.Action == "accept" && ok && v == false:
		word = "the box was not ticked"
	default:
		return misfitError()
	}
	return &Error{Code: ConfirmationDeclined,
		Message: fmt.Sprintf("The person did not accept (%s), so nothing was changed.", word),
		Hint:    "Do not retry unless the person asks for it."}
}

// misfitError is the refusal of an answer to the consent form that does
// not fit it (answerMiddleware, below, sends it too, for an answer the go-sdk refused).
func misfitError() *Error {
	return &Error{Code: ConfirmationDeclined,
		Message: "The answer to the confirmation form did not fit it (the form asks for accept, decline or cancel, and one box, confirm, ticked or not), so nothing was changed.",
		Hint:    "Ask the person again: accept with the box ticked allows the call; decline changes nothing."}
}

// consentRequest is the form the person sees: the question
// (consentMessage: the call, its arguments, target and preview, and the
// reference of the binding) and one box to tick.
func (s *Server) consentRequest(t *Tool, in any, args map[string]any, pv Preview, b confirm.Binding, bind string) *mcp.ElicitParams {
	action := "call " + t.name
	if t.action != nil {
		action = t.action(in)
	}
	if pv.Arguments != nil {
		args = pv.Arguments
	}
	return &mcp.ElicitParams{Mode: "form", Message: consentMessage(t, action, args, pv, b, bind), RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{consentField: map[string]any{
			"type": "boolean", "title": oneLine(cutValue("Yes: " + action)), "default": false,
			"description": "Tick to allow exactly this call, once.",
		}},
		"required": []string{consentField},
	}}
}

// elicitRequired is the refusal under ConfirmElicit for a client that does
// not declare form elicitation: there is no one to ask.
func (s *Server) elicitRequired(ctx context.Context, call *Call, rec *audit.Record) *mcp.CallToolResult {
	return s.fail(ctx, call, rec, Errorf(FailedPrecondition, "This server confirms %s by asking the person (elicitation), and the client did not declare form elicitation; nothing was changed.", call.Tool).
		WithHint("Use an MCP client that declares elicitation (a form the person answers), or ask the operator."))
}

// advertised is the schema a tool is listed and validated with: under
// ConfirmElicit no token is ever issued or taken, so gated tools do not
// offer confirmToken (a call that sends one is invalid_argument).
func (s *Server) advertised(t Tool) *jsonschema.Schema {
	schema := t.wireSchema()
	if s.opts.ConfirmBy != ConfirmElicit || schema == t.schema {
		return schema
	}
	delete(schema.Properties, confirmTokenProperty) // wireSchema cloned them
	return schema
}

// --- the consent question (rendered the same for every server) ---

// The bounds of the consent question (consentMessage): each argument's
// value is cut at maxConsentValue characters, at most maxConsentArgs
// arguments are listed, and the whole question is at most
// maxConsentMessage bytes.
const (
	maxConsentValue   = 200
	maxConsentArgs    = 20
	maxConsentMessage = 4096
	consentRefLen     = 16 // hex digits of the binding digest shown
)

// consentMessage is the question a person reads before a gated call runs,
// the same for every server: what the call does, then one fact a line —
//
//	Tool: delete_zone
//	Upstream: MCP server "fs" as its tool "write_file"  (a relayed call)
//	Target: path "/tmp/a"                                (when there is one)
//	Arguments:
//	  zone: example.com
//
// the preview's summary, whether it cannot be undone, and last the digest
// the answer is bound to as one short reference line. Every name and value
// is cleaned (untrusted.CleanString) and written on one line
// (untrusted.TerminalLine: a newline in a value cannot forge a line), each
// value cut at maxConsentValue characters, and the whole bounded.
func consentMessage(t *Tool, action string, args map[string]any, pv Preview, b confirm.Binding, bind string) string {
	var m strings.Builder
	fmt.Fprintf(&m, "An AI assistant asks to %s.\nTool: %s\n", oneLine(action), oneLine(t.name))
	if pv.Relay != "" {
		fmt.Fprintf(&m, "Upstream: %s\n", oneLine(pv.Relay))
	}
	if target := consentTarget(t, pv, b); target != "" {
		fmt.Fprintf(&m, "Target: %s\n", target)
	}
	writeArguments(&m, args)
	if pv.Summary != "" {
		m.WriteString(oneLine(pv.Summary) + "\n")
	}
	if t.policy.Destructive == Yes {
		m.WriteString("This removes or overwrites data and cannot be undone.\n")
	}
	m.WriteString("Accept only if you want exactly this; declining changes nothing.")
	ref := "\nReference: " + bind[:min(len(bind), consentRefLen)]
	body := m.String()
	if len(body)+len(ref) > maxConsentMessage {
		body = cutConsent(body, maxConsentMessage-len(ref)-len(consentCutMark))
	}
	return body + ref
}

const consentCutMark = "\n[the question was cut here: it is longer than this form shows]"

// cutConsent cuts s at n bytes, on a character boundary, and says so.
func cutConsent(s string, n int) string {
	return s[:untrusted.CutIndex(s, n)] + consentCutMark
}

// consentTarget is the target line: the canonical form the preview gives,
// or else the bound target fields when the binding holds them (a preview's
// Target is a key, not meant to be read).
func consentTarget(t *Tool, pv Preview, b confirm.Binding) string {
	if pv.Canonical != "" {
		return oneLine(pv.Canonical)
	}
	fields := t.policy.Confirm.bind.Target
	if pv.Target != "" || len(fields) == 0 {
		return ""
	}
	return oneLine(cutValue(b.Target))
}

// writeArguments lists the arguments as "  name: value" lines, sorted by
// name, at most maxConsentArgs of them.
func writeArguments(m *strings.Builder, args map[string]any) {
	if len(args) == 0 {
		m.WriteString("Arguments: none\n")
		return
	}
	m.WriteString("Arguments:\n")
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	slices.Sort(names)
	for i, k := range names {
		if i == maxConsentArgs {
			fmt.Fprintf(m, "  … and %d more argument(s), not shown\n", len(names)-i)
			break
		}
		fmt.Fprintf(m, "  %s: %s\n", oneLine(cutValue(k)), oneLine(cutValue(argText(args[k]))))
	}
}

// argText is a value as a person reads it: a string as itself ("" when
// empty), anything else as canonical JSON.
func argText(v any) string {
	if s, ok := v.(string); ok {
		if s == "" {
			return `""`
		}
		return s
	}
	raw, err := confirm.CanonicalValue(v)
	if err != nil {
		return "[a value that cannot be shown]"
	}
	return string(raw)
}

// cutValue cuts s at maxConsentValue characters and says how many there are.
func cutValue(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= maxConsentValue {
		return s
	}
	i, k := 0, 0
	for k < maxConsentValue {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
		k++
	}
	return fmt.Sprintf("%s… [cut: %d of %d characters shown]", s[:i], maxConsentValue, n)
}

// oneLine is s cleaned and written on one line.
func oneLine(s string) string { return untrusted.TerminalLine(clean(s)) }

// --- answers that do not fit the question ---

// A client on a protocol older than 2026-07-28 is asked over its session:
// the go-sdk's multi-round-trip middleware sends the kernel's input
// requests (the consent question, a handler's AskInput) as real requests
// and calls the tool again with the answers. When an answer does not fit
// the form (the go-sdk checks it against the requested schema), or the
// client answers with an error, the go-sdk fails the whole tools/call with
// a Go error, which reaches the client as a JSON-RPC error of code 0.
// answerMiddleware, just outside it, ends such a call with a tool error
// instead: the consent's is confirmation_declined, saying the answer did
// not fit; nothing ran.

// askedKey is the context key of the *asked of a tools/call.
type askedKey struct{}

// asked is what the last round of a tools/call asked, if anything: set
// when the handler answers with input requests, cleared when it runs
// again with the answers.
type asked struct {
	set bool
	rec audit.Record // the asking round's record
}

// noteAsked records, for answerMiddleware, whether this round asked.
func noteAsked(ctx context.Context, res *mcp.CallToolResult, rec *audit.Record) {
	a, ok := ctx.Value(askedKey{}).(*asked)
	if !ok {
		return
	}
	a.set = res != nil && len(res.InputRequests) > 0
	if a.set {
		a.rec = *rec
	}
}

func (s *Server) answerMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		a := &asked{}
		res, err := next(context.WithValue(ctx, askedKey{}, a), method, req)
		if err == nil || !a.set || ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return res, err
		}
		return s.unanswered(ctx, a.rec, err), nil
	}
}

// unanswered is the tool error of a question whose answer did not fit, or
// that the client failed to answer; the audit gets a record of it.
func (s *Server) unanswered(ctx context.Context, asking audit.Record, err error) *mcp.CallToolResult {
	rec := asking
	rec.Time = s.opts.Now()
	rec.Duration, rec.BytesIn = 0, 0
	te := &Error{Code: FailedPrecondition,
		Message: "The client's answer to this tool's question did not fit what was asked (or the client failed to answer), so the call ended; nothing more was done.",
		Hint:    "Answer the form as it asks, or call the tool again."}
	if asking.Confirm == audit.ConfirmAsked {
		te = misfitError()
		rec.Confirm = audit.ConfirmDeclined
	}
	rec.Outcome, rec.ErrorCode, rec.ErrorID = audit.Refused, string(te.Code), ""
	s.logger.InfoContext(ctx, "a question to the client was not answered as asked", "tool", rec.Tool, "code", te.Code,
		"error", untrusted.TerminalLine(clean(err.Error())))
	s.writeCallRecord(ctx, rec) // the call's one record (mrtr.go): this one, not the asking round's
	return s.errorResult(te, "")
}
