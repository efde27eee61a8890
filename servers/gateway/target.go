package gateway

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// A tool's target argument names what its calls act on: the authorization
// resource, the confirmation binding, the refusal's summary. It fails
// closed: a call that must name its target and does not, or names it with
// anything but a string, is refused before anything decides on it — never
// decided on the gateway itself instead. The upstream's schema decides
// nothing about the value: a schema that types the argument as anything,
// or as a string or null, changes nothing.

// targetArg is the target argument of one tool, and whether every call
// must carry it: always when target_args names it for the tool, and when
// target_arg names it for every tool of the upstream and the tool's input
// schema declares it. A call of another tool that carries the argument
// anyway is held to it too (its schema may let it through).
type targetArg struct {
	name     string
	required bool
}

// targetOf returns the target argument of tool; declared reports whether
// the tool's input schema declares an argument of that name.
func (u *Upstream) targetOf(tool string, declared func(arg string) bool) (targetArg, bool) {
	if a, ok := u.TargetArgs[tool]; ok {
		return targetArg{name: a, required: true}, true
	}
	if u.TargetArg == "" {
		return targetArg{}, false
	}
	return targetArg{name: u.TargetArg, required: declared(u.TargetArg)}, true
}

// declaredIn reports, for targetOf, whether a resolved input schema
// declares arg.
func declaredIn(s *jsonschema.Schema) func(arg string) bool {
	return func(arg string) bool { _, ok := s.Properties[arg]; return ok }
}

// declaredInRaw is declaredIn for a schema as the go-sdk's client decodes
// it (a map, or a schema value).
func declaredInRaw(s any) func(arg string) bool {
	return func(arg string) bool {
		switch x := s.(type) {
		case map[string]any:
			props, _ := x["properties"].(map[string]any)
			_, ok := props[arg]
			return ok
		case *jsonschema.Schema:
			return declaredIn(x)(arg)
		}
		var m map[string]any
		raw, err := json.Marshal(s)
		if err == nil && json.Unmarshal(raw, &m) == nil {
			return declaredInRaw(m)(arg)
		}
		return true // unreadable: the stricter answer
	}
}

// targetValue returns the call's value of the target argument a: ok false
// when the call names no target (a is not required and absent), an error
// when a value is required and absent, or is null or not a string.
func (u *Upstream) targetValue(tool string, a targetArg, v any, present bool) (string, bool, error) {
	if !present && !a.required {
		return "", false, nil
	}
	s, isString := v.(string)
	if !present || !isString {
		what := "is missing"
		if present {
			what = "is " + jsonKind(v)
			if _, unknown := v.(notString); !unknown {
				what += ", not a string"
			}
		}
		return "", false, kernel.Errorf(kernel.InvalidArgument,
			"The argument %q of %q names what the call acts on, and it %s; nothing was sent.", a.name, tool, what).
			WithHint("Give %q as a string: the gateway decides on it (authorization, confirmation) before the upstream %q sees the call.", a.name, u.Name)
	}
	return s, true, nil
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case notString:
		return "not a string"
	}
	return "a string"
}

// callTarget is the target of a relayed call with raw arguments, as the
// upstream's current definition of tool declares it: ok false when the
// call names none.
func (u *Upstream) callTarget(tool string, schema any, args map[string]any) (targetArg, string, bool, error) {
	a, has := u.targetOf(tool, declaredInRaw(schema))
	if !has {
		return a, "", false, nil
	}
	v, present := args[a.name]
	s, ok, err := u.targetValue(tool, a, v, present)
	return a, s, ok, err
}

// hasTargets reports whether the upstream names any target argument.
func (u *Upstream) hasTargets() bool { return u.TargetArg != "" || len(u.TargetArgs) > 0 }

// relayedTarget is callTarget under the upstream's current definition of
// tool, for the preview and the relayed call: the kernel decided on the
// definition the tool was registered with, and a call that reaches the
// upstream is held to the same rule again.
func (l *link) relayedTarget(tool string, args map[string]any) (targetArg, string, bool, error) {
	if !l.u.hasTargets() {
		return targetArg{}, "", false, nil
	}
	_, d, err := l.current(tool)
	if err != nil {
		return targetArg{}, "", false, err
	}
	return l.u.callTarget(tool, d.tool.InputSchema, args)
}
