package gateway

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// TargetResource is what a relayed tool acts on, for authorization: the
// value of its target argument (target_arg) in canonical form (target.go),
// with the upstream and the upstream's tool name. A tool without a target argument, or a call of a
// tool whose schema does not declare the upstream's target_arg and that
// does not carry it, acts on the gateway itself (Server::"bulwark-gateway").
var TargetResource = authz.ResourceType{Name: "Gateway::Target", Attrs: map[string]authz.AttrType{
	"upstream": authz.String, "tool": authz.String, "value": authz.String,
}}

// withTarget declares the tool's target (targetOf): a call whose target
// cannot be read is refused before the decision (targetValue), whatever
// type the tool's schema gives the argument.
func (u *Upstream) withTarget(t kernel.Tool, name string, schema *jsonschema.Schema) kernel.Tool {
	a, ok := u.targetOf(name, declaredIn(schema))
	if !ok {
		return t
	}
	build := func(v string, _ int64) authz.Resource {
		return authz.Resource{Type: TargetResource.Name, ID: fmt.Sprintf("%s:%s", u.Name, v),
			Attrs: map[string]any{"upstream": u.Name, "tool": name, "value": v}}
	}
	var targets authz.ResourceCache // this tool's (shared resources: never changed)
	return kernel.WithTarget(t, TargetResource, func(_ context.Context, _ *kernel.Call, args kernel.Args) (authz.Resource, error) {
		var v any = notString{}
		if s, ok := args.String(a.name); ok {
			v = s
		}
		s, ok, err := u.targetValue(name, a, v, args.Has(a.name))
		if !ok || err != nil {
			return authz.Resource{}, err
		}
		return targets.Get(s, 0, build), nil
	})
}

// notString stands for a value the kernel's read-only view of the
// arguments does not show, being no string.
type notString struct{}
