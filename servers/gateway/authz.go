package gateway

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// TargetResource is what a relayed tool acts on, for authorization: each
// value of its target arguments (target_arg, target_args) in canonical
// form (target.go), with the argument's name, the upstream and the
// upstream's tool name. A call on several targets (an array argument,
// several arguments) is allowed only when every one is. A tool without a
// target argument, or a call of a tool whose schema does not declare the
// upstream's target_arg and that does not carry it, acts on the gateway
// itself (Server::"bulwark-gateway").
var TargetResource = authz.ResourceType{Name: "Gateway::Target", Attrs: map[string]authz.AttrType{
	"upstream": authz.String, "tool": authz.String, "argument": authz.String, "value": authz.String,
}}

// withTarget declares the tool's targets (targetsOf): a call whose targets
// cannot all be read and put in canonical form is refused before the
// decision (callTargets), whatever type the tool's schema gives them.
func (u *Upstream) withTarget(t kernel.Tool, name string, schema *jsonschema.Schema) kernel.Tool {
	args := u.targetsOf(name, declaredIn(schema))
	if len(args) == 0 {
		return t
	}
	build := func(key string, _ int64) authz.Resource {
		arg, v, _ := strings.Cut(key, "\x00")
		return authz.Resource{Type: TargetResource.Name, ID: u.Name + ":" + v,
			Attrs: map[string]any{"upstream": u.Name, "tool": name, "argument": arg, "value": v}}
	}
	var cache authz.ResourceCache // this tool's (shared resources: never changed)
	return kernel.WithTargets(t, TargetResource, func(_ context.Context, _ *kernel.Call, a kernel.Args) ([]authz.Resource, error) {
		targets, _, err := u.callTargets(name, args, fromArgs(a))
		if err != nil || len(targets) == 0 {
			return nil, err
		}
		out := make([]authz.Resource, len(targets))
		for i, tg := range targets {
			out[i] = cache.Get(tg.arg+"\x00"+tg.value, 0, build)
		}
		return out, nil
	})
}

// fromArgs reads an argument from the kernel's read-only view of them.
func fromArgs(a kernel.Args) argGetter {
	return func(arg string) (any, bool, error) {
		if s, ok := a.String(arg); ok {
			return s, true, nil
		}
		if l, ok := a.Strings(arg); ok {
			return l, true, nil
		}
		return notString{}, a.Has(arg), nil
	}
}

// notString stands for a value the kernel's read-only view of the
// arguments does not show, being neither a string nor an array of them.
type notString struct{}
