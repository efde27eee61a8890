package rustpad

import (
	"context"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// The Rustpad server's resource model for authorization policies
// (kernel/authz): every tool that names a pad acts on
// Rustpad::Pad::"<id>" { id: "<id>" }, the id exactly as the pad's URL and
// the confirmation token carry it (pad ids are case-sensitive; the argument
// is validated before the decision, so no other spelling reaches it).
// get_stats, and create_document without an id (a new random pad), act on
// the server itself.

// PadResource is the Rustpad::Pad resource type.
var PadResource = authz.ResourceType{Name: "Rustpad::Pad", Attrs: map[string]authz.AttrType{"id": authz.String}}

func padTarget(_ context.Context, _ *kernel.Call, args kernel.Args) (authz.Resource, error) {
	id, _ := args.String("id")
	if id == "" {
		return authz.Resource{}, nil
	}
	if err := checkID(id); err != nil {
		return authz.Resource{}, err
	}
	return pads.Get(id, 0, padResource), nil
}

// pads caches the pads' resources (shared: they must not be changed).
var pads authz.ResourceCache

func padResource(id string, _ int64) authz.Resource {
	return authz.Resource{Type: PadResource.Name, ID: id, Attrs: map[string]any{"id": id}}
}

// withTargets declares the pad target of every tool that takes an id.
func withTargets(tools []kernel.Tool) []kernel.Tool {
	for i, t := range tools {
		if _, ok := t.InputSchema().Properties["id"]; ok {
			tools[i] = kernel.WithTarget(t, PadResource, padTarget)
		}
	}
	return tools
}
