package dns

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// The DNS server's resource model for authorization policies (kernel/authz).
// Every zone and RRSet tool acts on a Dns::Zone; list_zones and
// get_zone_action act on the server and see only the zones a policy lets
// the caller use. The local store and Hetzner give the same model, so one
// policy file works on both providers:
//
//	Dns::Zone::"<name>" { zone: "<name>", id: "<provider's id or empty>", nameLabels: [...] }
//
// The name is canonical — lower case, no trailing dot, the A-label form a
// provider stores (zone arguments are ASCII; an internationalized name is
// written in punycode) — and a zone given by id is resolved to its name on
// the provider in use, so a policy that speaks of names cannot be dodged
// by spelling: `resource.zone like "*.team-a.example"`. A zone that does not
// exist resolves to its normalized name with an empty id, so a denial never
// tells whether a zone exists; a numeric id that does not exist resolves to
// the empty name, which no delegation matches.

// ZoneResource is the Dns::Zone resource type.
var ZoneResource = authz.ResourceType{Name: "Dns::Zone", Attrs: map[string]authz.AttrType{
	"zone":       authz.String,
	"id":         authz.String,
	"nameLabels": authz.StringSet,
}}

// zoneResources caches zoneResource's work per name and id: a call, and
// each zone a listing shows, looks its resource up instead of building it.
var zoneResources authz.ResourceCache

// zoneResource is the resource of a zone the provider returned. The
// Resource is shared: it must not be changed.
func zoneResource(name string, id int64) authz.Resource {
	return zoneResources.Get(name, id, buildZoneResource)
}

func buildZoneResource(name string, id int64) authz.Resource {
	name = normalizeZone(name)
	sid := ""
	if id != 0 {
		sid = strconv.FormatInt(id, 10)
	}
	var labels []string
	if name != "" {
		labels = strings.Split(name, ".")
	}
	return authz.Resource{Type: ZoneResource.Name, ID: name, Attrs: map[string]any{"zone": name, "id": sid, "nameLabels": labels}}
}

// zoneTargetOf resolves the zone named by the argument field to its
// canonical resource. It reads the zone (never changes it); an absent field
// is the server itself. The zone allowlist applies first, with its own
// refusal: a zone outside it is never read, whatever the policy says.
func (s *Server) zoneTargetOf(field string) func(ctx context.Context, _ *kernel.Call, args kernel.Args) (authz.Resource, error) {
	return func(ctx context.Context, _ *kernel.Call, args kernel.Args) (authz.Resource, error) {
		arg, _ := args.String(field)
		if arg == "" {
			return authz.Resource{}, nil
		}
		if err := checkZone(field, arg); err != nil {
			return authz.Resource{}, err
		}
		if s.restricted() && !isID(arg) && !s.allowed(arg) {
			return authz.Resource{}, zoneDenied(arg) // the allowlist first, as without a policy
		}
		z, err := s.p.GetZone(ctx, arg)
		var pe *Error
		switch {
		case err == nil && !s.allowed(z.Name):
			return authz.Resource{}, zoneDenied(arg)
		case err == nil:
			s.remember(z)
			return zoneResource(z.Name, z.ID), nil
		case errors.As(err, &pe) && pe.Code == "not_found":
			if isID(arg) {
				return zoneResource("", 0), nil
			}
			return zoneResource(arg, 0), nil
		}
		return authz.Resource{}, mapError(err, zoneSubject(arg))
	}
}

// withTargets declares each tool's target (kernel.WithTarget) and the
// listing tools (kernel.Listing).
func (s *Server) withTargets(tools []kernel.Tool) []kernel.Tool {
	for i, t := range tools {
		switch name := t.Name(); {
		case name == "list_zones" || name == "get_zone_action":
			tools[i] = kernel.Listing(t, ZoneResource)
		case name == "create_zone":
			tools[i] = kernel.WithTarget(t, ZoneResource, s.zoneTargetOf("name"))
		case name == "list_zone_actions":
			tools[i] = kernel.Listing(kernel.WithTarget(t, ZoneResource, s.zoneTargetOf("zone")), ZoneResource)
		default:
			if _, ok := t.InputSchema().Properties["zone"]; ok {
				tools[i] = kernel.WithTarget(t, ZoneResource, s.zoneTargetOf("zone"))
			}
		}
	}
	return tools
}

// permitsZone: the policy in force lets the call's principal use zone z.
func permitsZone(call *kernel.Call, z Zone) bool {
	return call == nil || call.Permits(zoneResource(z.Name, z.ID))
}
