package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/internal/argcheck"
)

// Text is a result that is plain text, not JSON (a zone file, a pad, an
// advisory). It is cleaned and enveloped as text.
type Text string

// Preview is what a gated tool tells about its target before it acts. It is
// shown in the refusal that carries the token, so it must hold only what the
// tool counted (record counts, TTLs) and the caller's own arguments — never a
// value, comment, label or name read back from the upstream.
type Preview struct {
	// Summary is one sentence, e.g. `It currently holds 2 record(s), TTL 300.`
	Summary string
	// Target, when set, replaces the target fields in the token's binding by
	// a canonical key the tool computed (a zone id rather than a name that
	// may be spelled two ways).
	Target string
	// NothingToLose says the target holds nothing the call could destroy
	// (an empty pad about to be written): the gate lets the call through
	// without a token. Set it only from upstream state the tool has just
	// read, never from the arguments.
	NothingToLose bool
	// Data is what the preview saw, handed to the handler of the same call
	// through Call.Preview (so it writes only over the state the token was
	// bound to). It never reaches the client.
	Data any
}

// Spec declares a typed tool. In is the arguments' type: its JSON schema is
// the tool's input schema (descriptions from `jsonschema:"..."` tags) and
// arguments are validated against it before Handle runs. Out is the result:
// a struct or map (JSON), or Text.
type Spec[In, Out any] struct {
	Name        string
	Title       string
	Description string
	Policy      Policy
	// Handle does the work.
	Handle func(ctx context.Context, call *Call, in In) (Out, error)
	// Preview, for gated tools, inspects the target before the token is
	// issued and again before it is redeemed. Optional.
	Preview func(ctx context.Context, call *Call, in In) (Preview, error)
	// Action completes the refusal sentence "Refusing to <Action> without
	// confirmation.", e.g. `delete RRSet "www/A" of zone "example.com"`. It
	// may quote only the caller's arguments. Optional.
	Action func(in In) string
}

// Tool is a declared tool, ready for the kernel to register. Build one with
// NewTool or NewDynamicTool.
type Tool struct {
	name        string
	title       string
	description string
	policy      Policy
	schema      *jsonschema.Schema
	args        *argcheck.Validator // the wire schema compiled, by register
	err         error               // a declaration error, reported by New
	decode      func(raw json.RawMessage) (any, error)
	handle      func(ctx context.Context, call *Call, in any) (any, error)
	preview     func(ctx context.Context, call *Call, in any) (Preview, error)
	action      func(in any) string
	target      *toolTarget          // authorize.go
	listing     []authz.ResourceType // authorize.go
	requires    []ClientCapability   // client capabilities a call needs (RequireClient)
	asks        bool                 // the handler may return AskInput (mrtr.go)
	ownTarget   bool                 // a dynamic tool whose Preview computes the binding's target
}

// Name is the tool's name.
func (t Tool) Name() string { return t.name }

// Description is the tool's description.
func (t Tool) Description() string { return t.description }

// Policy is the tool's safety policy.
func (t Tool) Policy() Policy { return t.policy }

// InputSchema is the tool's input schema as declared (without the
// confirmToken property the kernel adds to gated tools).
func (t Tool) InputSchema() *jsonschema.Schema { return t.schema }

// RefineSchema applies fn to the tool's input schema, for packages such as
// argschema that state what Go struct tags cannot. An error from fn is a
// declaration error: New reports it, as it reports every other one.
func (t Tool) RefineSchema(fn func(s *jsonschema.Schema) error) Tool {
	if t.err != nil || t.schema == nil {
		return t // New reports the first declaration error
	}
	if err := fn(t.schema); err != nil {
		t.err = fmt.Errorf("tool %s: %w", t.name, err)
	}
	return t
}

// NewTool declares a typed tool.
func NewTool[In, Out any](s Spec[In, Out]) Tool {
	t := Tool{name: s.Name, title: s.Title, description: s.Description, policy: s.Policy}
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		t.err = fmt.Errorf("tool %s: input schema: %w", s.Name, err)
		return t
	}
	if schema.Type != "object" {
		t.err = fmt.Errorf("tool %s: arguments must be a struct", s.Name)
		return t
	}
	if schema.Properties == nil {
		schema.Properties = map[string]*jsonschema.Schema{}
	}
	t.schema = schema
	t.decode = func(raw json.RawMessage) (any, error) {
		var in In
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &in); err != nil {
				return nil, err
			}
		}
		return in, nil
	}
	if s.Handle == nil {
		t.err = fmt.Errorf("tool %s: no handler", s.Name)
		return t
	}
	t.handle = func(ctx context.Context, call *Call, in any) (any, error) {
		out, err := s.Handle(ctx, call, in.(In))
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	if s.Preview != nil {
		t.preview = func(ctx context.Context, call *Call, in any) (Preview, error) { return s.Preview(ctx, call, in.(In)) }
	}
	if s.Action != nil {
		t.action = func(in any) string { return s.Action(in.(In)) }
	}
	return t
}

// DynamicSpec declares a tool whose input schema is known only at run time
// (the gateway's tools, mirrored from another server).
type DynamicSpec struct {
	Name        string
	Title       string
	Description string
	Policy      Policy
	// Schema is the JSON schema of the arguments; its type must be "object".
	// New compiles it once into the validator every call goes through, and
	// refuses a schema that uses a keyword the validator does not implement
	// (unevaluated*, $dynamicRef, a $ref outside the schema, ...: see
	// kernel/internal/argcheck) rather than leave it unchecked.
	Schema *jsonschema.Schema
	// Handle receives the validated arguments as raw JSON (confirmToken
	// removed) and returns a JSON-able value, json.RawMessage or Text.
	Handle  func(ctx context.Context, call *Call, args json.RawMessage) (any, error)
	Preview func(ctx context.Context, call *Call, args json.RawMessage) (Preview, error)
	// PreviewBindsTarget says that Preview always sets Preview.Target (a
	// canonical key over whatever the call acts on), so the gate's Bind
	// fields need not be properties of Schema: a schema taken from another
	// server may have no property to name. It needs a Preview.
	PreviewBindsTarget bool
}

// NewDynamicTool declares a tool with a run-time schema.
func NewDynamicTool(s DynamicSpec) Tool {
	t := Tool{name: s.Name, title: s.Title, description: s.Description, policy: s.Policy, schema: s.Schema}
	switch {
	case s.Schema == nil || s.Schema.Type != "object":
		t.err = fmt.Errorf("tool %s: input schema must have type object", s.Name)
		return t
	case s.Handle == nil:
		t.err = fmt.Errorf("tool %s: no handler", s.Name)
		return t
	}
	if s.PreviewBindsTarget && s.Preview == nil {
		t.err = fmt.Errorf("tool %s: PreviewBindsTarget needs a Preview", s.Name)
		return t
	}
	t.ownTarget = s.PreviewBindsTarget
	t.decode = func(raw json.RawMessage) (any, error) { return raw, nil }
	t.handle = func(ctx context.Context, call *Call, in any) (any, error) {
		return s.Handle(ctx, call, in.(json.RawMessage))
	}
	if s.Preview != nil {
		t.preview = func(ctx context.Context, call *Call, in any) (Preview, error) {
			return s.Preview(ctx, call, in.(json.RawMessage))
		}
	}
	return t
}

// confirmTokenProperty is the argument gated tools take their token in.
const confirmTokenProperty = "confirmToken"

// wireSchema is the schema advertised and validated: the declared one, plus
// confirmToken for gated tools.
func (t Tool) wireSchema() *jsonschema.Schema {
	if !t.policy.Confirm.Gated() {
		return t.schema
	}
	s := *t.schema
	s.Properties = maps.Clone(t.schema.Properties)
	if s.Properties == nil { // a dynamic schema without properties
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Properties[confirmTokenProperty] = &jsonschema.Schema{
		Type: "string",
		Description: "Leave empty on the first call. The tool then refuses and returns a single-use token; " +
			"call again with the same arguments and that token to proceed.",
		MaxLength: ptr(256),
	}
	return &s
}

func ptr[T any](v T) *T { return &v }

// Validate reports the declaration error New would report for t alone
// (its name, description, policy and bound fields), for an embedder that
// builds tools from another server's definitions and skips a bad one
// rather than fail.
func (t Tool) Validate() error { return t.validate() }

// validate checks the declaration: the policy, and that bound fields exist.
func (t Tool) validate() error {
	if t.err != nil {
		return t.err
	}
	if err := validToolName(t.name); err != nil {
		return err
	}
	if t.description == "" {
		return fmt.Errorf("tool %s: no description", t.name)
	}
	if err := t.policy.Validate(); err != nil {
		return fmt.Errorf("tool %s: %w", t.name, err)
	}
	b := t.policy.Confirm.bind
	for _, f := range append(append([]string{}, b.Target...), b.Payload...) {
		if _, ok := t.schema.Properties[f]; !ok && !t.ownTarget {
			return fmt.Errorf("tool %s: confirmation binds %q, which is not an argument", t.name, f)
		}
	}
	if _, clash := t.schema.Properties[confirmTokenProperty]; clash {
		return fmt.Errorf("tool %s: %q is the kernel's argument", t.name, confirmTokenProperty)
	}
	return nil
}

func validToolName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("tool name %q: must be 1-128 characters", name)
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("tool name %q: only [A-Za-z0-9_.-] allowed", name)
		}
	}
	return nil
}

// isText reports whether v is a Text result.
func isText(v any) (Text, bool) {
	if t, ok := v.(Text); ok {
		return t, true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String && rv.Type() == reflect.TypeFor[Text]() {
		return Text(rv.String()), true
	}
	return "", false
}
