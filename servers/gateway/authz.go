package gateway

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// TargetResource is what a relayed tool acts on, for authorization: the
// value of its target argument (target_arg), with the upstream and the
// upstream's tool name. A tool without a target argument, or a call that
// leaves it out, acts on the gateway itself (Server::"bulwark-gateway").
var TargetResource = authz.ResourceType{Name: "Gateway::Target", Attrs: map[string]authz.AttrType{
	"upstream": authz.String, "tool": authz.String, "value": authz.String,
}}

// withTarget declares the tool's target when its schema has the target
// argument as a string.
func (u *Upstream) withTarget(t kernel.Tool, name string, schema *jsonschema.Schema) kernel.Tool {
	arg := u.targetArg(name)
	if p, ok := schema.Properties[arg]; arg == "" || !ok || p == nil || p.Type != "string" {
		return t
	}
	build := func(v string, _ int64) authz.Resource {
		return authz.Resource{Type: TargetResource.Name, ID: fmt.Sprintf("%s:%s", u.Name, v),
			Attrs: map[string]any{"upstream": u.Name, "tool": name, "value": v}}
	}
	var targets authz.ResourceCache // this tool's (shared resources: never changed)
	return kernel.WithTarget(t, TargetResource, func(_ context.Context, _ *kernel.Call, args kernel.Args) (authz.Resource, error) {
		v, ok := args.String(arg)
		if !ok {
			return authz.Resource{}, nil
		}
		return targets.Get(v, 0, build), nil
	})
}
