package gateway

import (
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

// targetArg is the target argument of one tool: its kind, and whether
// every call must carry it — always when target_args names it for the
// tool, and when target_arg names it for every tool of the upstream and
// the tool's input schema declares it. A call of another tool that carries
// the argument anyway is held to it too (its schema may let it through).
type targetArg struct {
	name     string
	kind     TargetKind
	required bool
}

// targetOf returns the target argument of tool; declared reports whether
// the tool's input schema declares an argument of that name.
func (u *Upstream) targetOf(tool string, declared func(arg string) bool) (targetArg, bool) {
	if a, ok := u.TargetArgs[tool]; ok {
		return targetArg{name: a, kind: u.kindOf(a), required: true}, true
	}
	if u.TargetArg == "" {
		return targetArg{}, false
	}
	return targetArg{name: u.TargetArg, kind: u.kindOf(u.TargetArg), required: declared(u.TargetArg)}, true
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

// targetValue returns the canonical value of the target argument a, given
// the call's value v (present: the call carries it): ok false when the
// call names no target (a is not required and absent); an error when a
// value is required and absent, is null or not a string, has no canonical
// form, or lies outside the upstream's roots.
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
	c, err := u.canonical(tool, a, s)
	return c, err == nil, err
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

// relayedTarget is the target of a relayed call under the upstream's
// current definition of tool, for the preview and the relayed call: the
// kernel decided on the definition the tool was registered with, and a
// call that reaches the upstream is held to the same rule again. get
// returns the call's value of an argument.
func (l *link) relayedTarget(tool string, get func(arg string) (any, bool, error)) (targetArg, string, bool, error) {
	if !l.u.hasTargets() {
		return targetArg{}, "", false, nil
	}
	_, d, err := l.current(tool)
	if err != nil {
		return targetArg{}, "", false, err
	}
	a, has := l.u.targetOf(tool, declaredInRaw(d.tool.InputSchema))
	if !has {
		return a, "", false, nil
	}
	v, present, err := get(a.name)
	if err != nil {
		return a, "", false, err
	}
	s, ok, err := l.u.targetValue(tool, a, v, present)
	return a, s, ok, err
}

// fromMap reads a decoded argument.
func fromMap(m map[string]any) func(string) (any, bool, error) {
	return func(arg string) (any, bool, error) { v, ok := m[arg]; return v, ok, nil }
}

// canonicalArgs returns the arguments the upstream receives: args, with
// the target in its canonical form. A call whose target is already
// canonical is relayed as it is.
func (l *link) canonicalArgs(tool string, args json.RawMessage) (json.RawMessage, error) {
	if !l.u.hasTargets() {
		return args, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, err
	}
	a, s, named, err := l.relayedTarget(tool, func(arg string) (any, bool, error) {
		raw, ok := m[arg]
		if !ok {
			return nil, false, nil
		}
		var v any
		return v, true, json.Unmarshal(raw, &v)
	})
	if err != nil || !named {
		return args, err
	}
	c, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if string(c) == string(m[a.name]) {
		return args, nil
	}
	m[a.name] = c
	return json.Marshal(m)
}

// validateTargets checks the target settings of an upstream.
func (u *Upstream) validateTargets() error {
	for tool, arg := range u.TargetArgs {
		if tool == "" || arg == "" {
			return errors.New("target_args needs tool = \"argument\" entries")
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
