package kernel

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
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
// not fit it (answer.go sends it too, for an answer the go-sdk refused).
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
