package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// A tool's target argument names what its calls act on. Its value is put
// in canonical form (canon.go) before anything decides on it: the
// authorization resource, the confirmation binding and the refusal's
// summary all hold the canonical form, and the upstream receives it in
// place of the caller's spelling. It fails closed: a call that must name
// its target and does not, or names it with anything but a string, or with
// a value that has no canonical form or lies outside the upstream's roots,
// is refused before anything decides on it — never decided on the gateway
// itself instead. The upstream's schema decides nothing about the value: a
// schema that types the argument as anything, or as a string or null,
// changes nothing.

// TargetKind says how a target argument's value is made canonical.
type TargetKind string

// The kinds of target.
const (
	// KindPath is an absolute POSIX path, cleaned lexically
	// (canonicalPath) and held to the upstream's Roots.
	KindPath TargetKind = "path"
	// KindURL is an absolute URL, normalized (canonicalURL).
	KindURL TargetKind = "url"
	// KindString is taken as it is: an identifier the gateway cannot
	// normalize (a ticket id, a key).
	KindString TargetKind = "string"
)

// pathWords and urlWords decide the default kind of an argument from its
// name, or the last word of it (file_path, filePath, base-url).
var (
	pathWords = []string{"path", "paths", "file", "files", "filename", "dir", "directory", "folder", "source", "destination"}
	urlWords  = []string{"url", "urls", "uri", "uris"}
)

// DefaultKind is the kind of a target argument that target_kinds does not
// name: path when its name, or the name's last word, is one of pathWords,
// url for urlWords, string otherwise.
func DefaultKind(arg string) TargetKind {
	w := lastWord(arg)
	switch {
	case slices.Contains(pathWords, w):
		return KindPath
	case slices.Contains(urlWords, w):
		return KindURL
	}
	return KindString
}

// lastWord is the last word of a name in snake, kebab, dotted or camel
// case, lower-cased.
func lastWord(name string) string {
	i := strings.LastIndexAny(name, "_-. ")
	w := name[i+1:]
	for j := len(w) - 1; j > 0; j-- {
		if unicode.IsUpper(rune(w[j])) && !unicode.IsUpper(rune(w[j-1])) {
			w = w[j:]
			break
		}
	}
	return strings.ToLower(w)
}

// kindOf is the kind of the target argument arg on this upstream.
func (u *Upstream) kindOf(arg string) TargetKind {
	if k, ok := u.TargetKinds[arg]; ok {
		return k
	}
	return DefaultKind(arg)
}

// targetArg is a target argument of one tool: its kind, and whether every
// call must carry it — always when target_args names it for the tool, and
// when target_arg names it for every tool of the upstream and the tool's
// input schema declares it. A call of another tool that carries the
// argument anyway is held to it too (its schema may let it through).
type targetArg struct {
	name     string
	kind     TargetKind
	required bool
}

// targetsOf returns the target arguments of tool; declared reports whether
// the tool's input schema declares an argument of that name.
func (u *Upstream) targetsOf(tool string, declared func(arg string) bool) []targetArg {
	if names, ok := u.TargetArgs[tool]; ok {
		out := make([]targetArg, len(names))
		for i, n := range names {
			out[i] = targetArg{name: n, kind: u.kindOf(n), required: true}
		}
		return out
	}
	if u.TargetArg == "" {
		return nil
	}
	return []targetArg{{name: u.TargetArg, kind: u.kindOf(u.TargetArg), required: declared(u.TargetArg)}}
}

// declaredIn reports, for targetsOf, whether a resolved input schema
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

// target is one target of a call, in canonical form.
type target struct{ arg, value string }

// maxTargets bounds the targets of one call: each is put to the policies.
const maxTargets = 256

// argGetter returns a call's value of an argument and whether the call
// carries it.
type argGetter func(arg string) (v any, present bool, err error)

// callTargets returns every target of a call of tool, in canonical form,
// in the order of args and of each array: a target argument's value is a
// string or an array of strings (whatever the tool's schema says), and
// canon holds each one's canonical value (a string or []any of strings) to
// relay. A required argument that is absent, a value of another type, an
// empty array, a value with no canonical form or outside the upstream's
// roots, and more than maxTargets targets, refuse the call.
func (u *Upstream) callTargets(tool string, args []targetArg, get argGetter) (targets []target, canon map[string]any, err error) {
	for _, a := range args {
		v, present, err := get(a.name)
		if err != nil {
			return nil, nil, err
		}
		if !present && !a.required {
			continue
		}
		vals, list, ok := targetStrings(v)
		if !present || !ok || len(vals) == 0 {
			return nil, nil, u.notATarget(tool, a, v, present)
		}
		if len(targets)+len(vals) > maxTargets {
			return nil, nil, kernel.Errorf(kernel.InvalidArgument, "The call of %q names more than %d targets; nothing was sent.", tool, maxTargets).
				WithHint("Split it into several calls: each target is authorized on its own.")
		}
		out := make([]any, len(vals))
		for i, s := range vals {
			c, err := u.canonical(tool, a, s)
			if err != nil {
				return nil, nil, err
			}
			targets, out[i] = append(targets, target{arg: a.name, value: c}), c
		}
		if canon == nil {
			canon = map[string]any{}
		}
		canon[a.name] = out
		if !list {
			canon[a.name] = out[0]
		}
	}
	return targets, canon, nil
}

// targetStrings reads a target argument's value: a string, or an array
// whose every element is a string (list true).
func targetStrings(v any) (vals []string, list, ok bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, false, true
	case []string:
		return x, true, true
	case []any:
		vals = make([]string, len(x))
		for i, e := range x {
			if vals[i], ok = e.(string); !ok {
				return nil, true, false
			}
		}
		return vals, true, true
	}
	return nil, false, false
}

// notATarget is the refusal of a target argument that is missing, or
// neither a string nor a non-empty array of strings.
func (u *Upstream) notATarget(tool string, a targetArg, v any, present bool) error {
	what := "is missing"
	switch l, _ := v.([]any); {
	case present && l != nil && len(l) == 0:
		what = "is an empty array"
	case present && l != nil:
		what = "is an array that holds something else than strings"
	case present:
		what = "is " + jsonKind(v)
		if _, unknown := v.(notString); !unknown {
			what += ", not a string"
		}
	}
	return kernel.Errorf(kernel.InvalidArgument,
		"The argument %q of %q names what the call acts on, and it %s; nothing was sent.", a.name, tool, what).
		WithHint("Give %q as a string (or a non-empty array of strings): the gateway decides on it (authorization, confirmation) before the upstream %q sees the call.", a.name, u.Name)
}

// canonical is the canonical form of the value s of the target argument a.
func (u *Upstream) canonical(tool string, a targetArg, s string) (string, error) {
	var c string
	var err error
	switch a.kind {
	case KindPath:
		c, err = canonicalPath(s)
	case KindURL:
		c, err = canonicalURL(s)
	default:
		return s, nil
	}
	if err != nil {
		return "", kernel.Errorf(kernel.InvalidArgument, "The argument %q of %q (a %s) is refused: %s; nothing was sent.",
			a.name, tool, a.kind, strings.TrimPrefix(err.Error(), errTarget.Error()+": ")).
			WithHint("%s", kindHint[a.kind])
	}
	if a.kind == KindPath && len(u.Roots) > 0 && !slices.ContainsFunc(u.Roots, func(r string) bool { return underRoot(c, r) }) {
		return "", kernel.Errorf(kernel.PermissionDenied, "The path %.200q (argument %q of %q) is outside the directories the gateway lets the upstream %q act on; nothing was sent.",
			c, a.name, tool, u.Name).WithHint("Use a path below one of the upstream's roots; the operator sets them (roots in the gateway's configuration).")
	}
	return c, nil
}

var kindHint = map[TargetKind]string{
	KindPath: "Give an absolute path (/dir/file) without backslashes, control characters or percent-encoded bytes; the gateway resolves . and .. itself.",
	KindURL:  "Give an absolute URL (https://host/path) without user information, white space or characters outside ASCII (percent-encode them).",
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

// hasTargets reports whether the upstream names any target argument.
func (u *Upstream) hasTargets() bool { return u.TargetArg != "" || len(u.TargetArgs) > 0 }

// relayedPlan is the target arguments of tool under the upstream's current
// definition of it, for the preview and the relayed call: the kernel
// decided on the definition the tool was registered with, and a call that
// reaches the upstream is held to the same rule again.
func (l *link) relayedPlan(tool string) ([]targetArg, error) {
	if !l.u.hasTargets() {
		return nil, nil
	}
	_, d, err := l.current(tool)
	if err != nil {
		return nil, err
	}
	return l.u.targetsOf(tool, declaredInRaw(d.tool.InputSchema)), nil
}

// relayedTargets are the targets of a relayed call (relayedPlan).
func (l *link) relayedTargets(tool string, get argGetter) ([]target, map[string]any, error) {
	plan, err := l.relayedPlan(tool)
	if err != nil || len(plan) == 0 {
		return nil, nil, err
	}
	return l.u.callTargets(tool, plan, get)
}

// fromMap reads a decoded argument.
func fromMap(m map[string]any) argGetter {
	return func(arg string) (any, bool, error) { v, ok := m[arg]; return v, ok, nil }
}

// canonicalArgs returns the arguments the upstream receives: args, with
// every target in its canonical form. A call whose targets are already
// canonical is relayed as it is, and so is one that names none of its
// tool's optional target arguments (args is the kernel's encoding, as
// json.Marshal writes it, so a member's key is the name as json.Marshal
// writes it; no decoding is needed to see that it is absent).
func (l *link) canonicalArgs(tool string, args json.RawMessage) (json.RawMessage, error) {
	plan, err := l.relayedPlan(tool)
	if err != nil || !mayName(plan, args) {
		return args, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, err
	}
	_, canon, err := l.u.callTargets(tool, plan, func(arg string) (any, bool, error) {
		raw, ok := m[arg]
		if !ok {
			return nil, false, nil
		}
		var v any
		return v, true, json.Unmarshal(raw, &v)
	})
	if err != nil {
		return nil, err
	}
	changed := false
	for arg, v := range canon {
		c, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if string(c) != string(m[arg]) {
			m[arg], changed = c, true
		}
	}
	if !changed {
		return args, nil
	}
	return json.Marshal(m)
}

// mayName reports whether a call with the encoded arguments args may name
// a target of plan: one is required, or one's key appears in args, or args
// holds an escape (a key could be spelled with one).
func mayName(plan []targetArg, args json.RawMessage) bool {
	if len(plan) > 0 && bytes.IndexByte(args, '\\') >= 0 {
		return true
	}
	for _, a := range plan {
		key, err := json.Marshal(a.name)
		if a.required || err != nil || bytes.Contains(args, key) {
			return true
		}
	}
	return false
}

// summary names a call's targets for the confirmation's refusal and
// question: at most summaryTargets, then how many more.
func summary(targets []target) string {
	const summaryTargets = 8
	var b strings.Builder
	for i, t := range targets {
		if i == summaryTargets {
			fmt.Fprintf(&b, " and %d more", len(targets)-i)
			break
		}
		switch {
		case i == 0:
		case i == len(targets)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.200q", t.arg, t.value)
	}
	return b.String()
}

// validateTargets checks the target settings of an upstream.
func (u *Upstream) validateTargets() error {
	if strings.ContainsRune(u.TargetArg, 0) {
		return errors.New("target_arg holds NUL")
	}
	for tool, args := range u.TargetArgs {
		if tool == "" || len(args) == 0 || slices.Contains(args, "") || slices.ContainsFunc(args, func(a string) bool { return strings.ContainsRune(a, 0) }) {
			return errors.New("target_args needs tool = \"argument\" or tool = [\"argument\", ...] entries")
		}
	}
	for arg, k := range u.TargetKinds {
		if arg == "" || (k != KindPath && k != KindURL && k != KindString) {
			return fmt.Errorf("target_kinds: %q = %q: the kinds are path, url and string", arg, k)
		}
	}
	for _, r := range u.Roots {
		if c, err := canonicalPath(r); err != nil || c != r {
			return fmt.Errorf("roots: %q is not an absolute path in canonical form (%s)", r, rootWant(c, err))
		}
	}
	return nil
}

func rootWant(c string, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("write %q", c)
}

// ArgNames names one target argument, or several: target_args takes
// "source" or ["source", "destination"].
type ArgNames []string

// UnmarshalTOML reads a string or an array of strings.
func (a *ArgNames) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*a = ArgNames{x}
		return nil
	case []any:
		out := make(ArgNames, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("target_args: %v is not an argument name", e)
			}
			out[i] = s
		}
		*a = out
		return nil
	}
	return fmt.Errorf("target_args: %v is neither an argument name nor a list of them", v)
}
