package kernel

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/internal/argcheck"
	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
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
	// Relay, for a call relayed to another server (a gateway), names that
	// server and the tool's name there as a person reads it (`MCP server
	// "fs" as its tool "write_file"`). The consent question and the refusal
	// show it on a line of its own.
	Relay string
	// Canonical is the target as the call will act on it, in its canonical
	// form, as a person reads it (`path "/tmp/a"`); the consent question
	// shows it as its Target line. Set it only from the arguments or from
	// what the tool resolved them to, never from upstream text.
	Canonical string
	// Arguments, when the tool rewrites the caller's arguments before it
	// acts (a gateway sends its targets in canonical form), are the
	// arguments as it will send them: the consent question lists these
	// rather than the caller's spelling.
	Arguments map[string]any
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
	authzAction int                  // 1 + its index in the authorization model's actions (authorize.go)
	listing     []authz.ResourceType // authorize.go
	requires    []ClientCapability   // client capabilities a call needs (RequireClient)
	asks        bool                 // the handler may return AskInput (mrtr.go)
	ownTarget   bool                 // a dynamic tool whose Preview computes the binding's target
	taskSupport string               // execution.taskSupport (TaskSupport, tasks.go)
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
	plan := planStruct(reflect.TypeFor[In]())
	// decode returns a *In (boxing a pointer allocates nothing; boxing the
	// struct copied it), which the closures below dereference: each of
	// handle, preview and action receives its own copy of the struct, as
	// before.
	t.decode = func(raw json.RawMessage) (any, error) {
		in := new(In)
		if plan != nil && plan.decode(raw, reflect.ValueOf(in).Elem()) {
			return in, nil
		}
		*in = *new(In) // what the plan may have set is dropped: encoding/json decides
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, in); err != nil {
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
		out, err := s.Handle(ctx, call, *in.(*In))
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	if s.Preview != nil {
		t.preview = func(ctx context.Context, call *Call, in any) (Preview, error) { return s.Preview(ctx, call, *in.(*In)) }
	}
	if s.Action != nil {
		t.action = func(in any) string { return s.Action(*in.(*In)) }
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
	// kernel/internal/argcheck) rather than leave it unchecked; Tool.Validate
	// reports the same error beforehand.
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

// Validate reports the declaration error New and AddTools would report for
// t alone (its name, description, policy, bound fields, and its input
// schema compiled into the argument validator), for an embedder that
// builds tools from another server's definitions and skips a bad one
// rather than fail. It is the check they run.
func (t Tool) Validate() error { return t.validate() }

// validate checks the declaration: the policy, that bound fields exist,
// and the input schema (checkSchema).
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
	return checkSchema(t.name, t.schema)
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

// The typed decode: a tool's arguments (as json.Marshal writes the
// validated map) into its In struct. encoding/json's struct decoding is
// the behaviour tools were written against — names matched exactly, then
// without regard to ASCII case; numbers read with strconv into the field's
// size; null leaving a value alone but clearing a pointer or a slice — and
// its reflection and checks cost a tenth of a call. structPlan does the
// same for the structs tools declare (flat, fields of scalars, pointers to
// scalars and string slices) and gives up — the whole decode then goes to
// json.Unmarshal, errors included — on anything else: a key that is not
// ASCII or names no field it handles, a field set twice, a value of another
// JSON type, a number strconv refuses, input jsonscan's grammar refuses.
// FuzzStructPlan compares it with json.Unmarshal.

// fieldKind is what a planned field holds.
type fieldKind uint8

const (
	kindOther fieldKind = iota // not planned: a key naming it gives up
	kindString
	kindBool
	kindInt
	kindUint
	kindFloat
	kindStrings // a slice of a string kind
)

type planField struct {
	name  string // the JSON name
	index int    // in the struct
	kind  fieldKind
	ptr   bool // *T of a scalar T
}

// structPlan decodes into one struct type.
type structPlan struct{ fields []planField }

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumber      = reflect.TypeFor[json.Number]()
)

// custom reports whether encoding/json decodes into t other than by its
// kind: a type with its own decoding, or json.Number.
func custom(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t == jsonNumber || t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler)
}

// planStruct returns the plan for t, or nil when t is not a struct the plan
// can follow encoding/json's field rules for: an embedded field, a name or
// tag outside [A-Za-z0-9_.-], a ",string" option, two fields whose names
// fold to the same, or a type with its own decoding.
func planStruct(t reflect.Type) *structPlan {
	if t.Kind() != reflect.Struct || custom(t) {
		return nil
	}
	p := &structPlan{}
	folded := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			if o != "" && o != "omitempty" && o != "omitzero" {
				return nil // ",string" and whatever else: not followed
			}
		}
		if name == "" {
			name = sf.Name
		}
		if !plainName(name) {
			return nil
		}
		key := strings.ToUpper(name)
		if folded[key] {
			return nil
		}
		folded[key] = true
		p.fields = append(p.fields, planField{name: name, index: i})
		f := &p.fields[len(p.fields)-1]
		ft := sf.Type
		if ft.Kind() == reflect.Pointer && !custom(ft) {
			f.ptr, ft = true, ft.Elem()
		}
		if custom(ft) {
			continue
		}
		f.kind = scalarKind(ft.Kind())
		if !f.ptr && ft.Kind() == reflect.Slice && !custom(ft.Elem()) && ft.Elem().Kind() == reflect.String {
			f.kind = kindStrings
		}
	}
	return p
}

func scalarKind(k reflect.Kind) fieldKind {
	switch k {
	case reflect.String:
		return kindString
	case reflect.Bool:
		return kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return kindUint
	case reflect.Float32, reflect.Float64:
		return kindFloat
	}
	return kindOther
}

// plainName reports whether a JSON name is non-empty ASCII of
// [A-Za-z0-9_.-]: a valid tag for encoding/json, folded by ASCII case alone.
func plainName(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return s != ""
}

// field finds the field a key names as encoding/json does: the exact name,
// else the name without regard to ASCII case. It returns the field's
// position in the plan, -1 for none; ok is false when the key is not ASCII
// (encoding/json folds Unicode too).
func (p *structPlan) field(key []byte) (i int, ok bool) {
	for i := range p.fields {
		if p.fields[i].name == string(key) {
			return i, true
		}
	}
	for _, c := range key {
		if c >= 0x80 {
			return -1, false
		}
	}
	for i := range p.fields {
		if strings.EqualFold(p.fields[i].name, string(key)) {
			return i, true
		}
	}
	return -1, true
}

// decode decodes raw into v (a zero struct of the plan's type) and reports
// whether it could; when it could not, v holds part of the input and the
// caller must start again with encoding/json.
func (p *structPlan) decode(raw []byte, v reflect.Value) bool {
	sc := jsonscan.Scanner{Data: raw}
	if sc.Peek() != '{' {
		return false
	}
	var set uint64 // the fields already set, by position in the plan
	if len(p.fields) > 64 {
		return false
	}
	err := sc.Members(1, func(key []byte) error {
		i, ok := p.field(key)
		if !ok {
			return errGiveUp
		}
		if i < 0 { // no such field: encoding/json skips the value
			return sc.Skip(1)
		}
		f, bit := &p.fields[i], uint64(1)<<i
		if f.kind == kindOther || set&bit != 0 {
			return errGiveUp
		}
		set |= bit
		return p.value(&sc, f, v.Field(f.index))
	})
	return err == nil && sc.AtEnd()
}

var errGiveUp = fmt.Errorf("kernel: the typed decode leaves this to encoding/json")

// value decodes the value at sc into the field fv.
func (p *structPlan) value(sc *jsonscan.Scanner, f *planField, fv reflect.Value) error {
	c := sc.Peek()
	if c == 'n' { // null: clears a pointer or a slice, leaves anything else alone
		if err := sc.Scalar(); err != nil {
			return err
		}
		if f.ptr || f.kind == kindStrings {
			fv.SetZero()
		}
		return nil
	}
	if f.kind == kindStrings {
		if c != '[' {
			return errGiveUp
		}
		out := reflect.MakeSlice(fv.Type(), 0, 0)
		err := sc.Elements(2, func() error {
			e := reflect.New(fv.Type().Elem()).Elem()
			switch sc.Peek() {
			case 'n':
				if err := sc.Scalar(); err != nil {
					return err
				}
			case '"':
				s, err := scanString(sc)
				if err != nil {
					return err
				}
				e.SetString(s)
			default:
				return errGiveUp
			}
			out = reflect.Append(out, e)
			return nil
		})
		if err != nil {
			return err
		}
		fv.Set(out)
		return nil
	}
	if f.ptr {
		nv := reflect.New(fv.Type().Elem())
		if err := scalar(sc, f.kind, c, nv.Elem()); err != nil {
			return err
		}
		fv.Set(nv)
		return nil
	}
	return scalar(sc, f.kind, c, fv)
}

// scalar decodes a scalar of kind k, whose first byte is c, into v.
func scalar(sc *jsonscan.Scanner, k fieldKind, c byte, v reflect.Value) error {
	switch {
	case k == kindString && c == '"':
		s, err := scanString(sc)
		if err != nil {
			return err
		}
		v.SetString(s)
		return nil
	case k == kindBool && (c == 't' || c == 'f'):
		if err := sc.Scalar(); err != nil {
			return err
		}
		v.SetBool(c == 't')
		return nil
	case (k == kindInt || k == kindUint || k == kindFloat) && (c == '-' || c >= '0' && c <= '9'):
		start := sc.Pos
		if err := sc.Number(); err != nil {
			return err
		}
		num := string(sc.Data[start:sc.Pos])
		switch k {
		case kindInt:
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || v.OverflowInt(n) {
				return errGiveUp
			}
			v.SetInt(n)
		case kindUint:
			n, err := strconv.ParseUint(num, 10, 64)
			if err != nil || v.OverflowUint(n) {
				return errGiveUp
			}
			v.SetUint(n)
		default:
			n, err := strconv.ParseFloat(num, v.Type().Bits())
			if err != nil || v.OverflowFloat(n) {
				return errGiveUp
			}
			v.SetFloat(n)
		}
		return nil
	}
	return errGiveUp
}

// scanString reads a string as encoding/json decodes it (jsonscan's
// decoder, which refuses bytes that are not UTF-8: then encoding/json
// decides).
func scanString(sc *jsonscan.Scanner) (string, error) {
	raw, esc, err := sc.String()
	if err != nil {
		return "", err
	}
	return jsonscan.DecodeString(raw, esc)
}
