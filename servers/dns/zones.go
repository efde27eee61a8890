package dns

import (
	"context"
	"fmt"
	"strconv"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

// Arguments of the zone tools.
type (
	zoneArgs struct {
		Zone string `json:"zone" jsonschema:"the zone's id or name, e.g. 4711 or example.com"`
	}
	listZonesArgs struct {
		Name          string `json:"name,omitempty" jsonschema:"only the zone with exactly this name"`
		Mode          string `json:"mode,omitempty" jsonschema:"only zones of this mode"`
		LabelSelector string `json:"label_selector,omitempty" jsonschema:"only zones whose labels match, e.g. env=prod,team!=ops"`
		listArgs
	}
	createZoneArgs struct {
		Name               string            `json:"name" jsonschema:"the zone's name, e.g. example.com (punycode for IDNs)"`
		Mode               string            `json:"mode" jsonschema:"primary: records managed here; secondary: transferred from primary_nameservers"`
		TTL                *int              `json:"ttl,omitempty" jsonschema:"default TTL in seconds of RRSets without their own"`
		Labels             map[string]string `json:"labels,omitempty" jsonschema:"labels, key to value"`
		PrimaryNameservers []nameserverArg   `json:"primary_nameservers,omitempty" jsonschema:"for a secondary zone: the servers to transfer it from"`
		Zonefile           string            `json:"zonefile,omitempty" jsonschema:"for a primary zone: initial contents in BIND zone-file syntax"`
	}
	updateZoneArgs struct {
		Zone   string            `json:"zone" jsonschema:"the zone's id or name"`
		Labels map[string]string `json:"labels" jsonschema:"the new labels; they replace all current labels"`
	}
	importArgs struct {
		Zone     string `json:"zone" jsonschema:"the zone's id or name"`
		Zonefile string `json:"zonefile" jsonschema:"the zone file (BIND syntax) that replaces every RRSet of the zone"`
	}
	zoneTTLArgs struct {
		Zone string `json:"zone" jsonschema:"the zone's id or name"`
		TTL  int    `json:"ttl" jsonschema:"the new default TTL in seconds"`
	}
	zoneProtectionArgs struct {
		Zone   string `json:"zone" jsonschema:"the zone's id or name"`
		Delete bool   `json:"delete" jsonschema:"true turns delete protection on; false turns it off (asks for confirmation)"`
	}
	nameserversArgs struct {
		Zone               string          `json:"zone" jsonschema:"the secondary zone's id or name"`
		PrimaryNameservers []nameserverArg `json:"primary_nameservers" jsonschema:"the servers to transfer the zone from; they replace the current ones"`
	}
)

// Results of the zone tools.
type (
	zoneResult struct {
		Zone Zone `json:"zone"`
	}
	createZoneResult struct {
		Zone   Zone    `json:"zone"`
		Action *Action `json:"action,omitempty"`
		Note   string  `json:"note,omitempty"`
	}
)

func (s *Server) zoneTools() []kernel.Tool {
	return append(s.zoneReadTools(), s.zoneWriteTools()...)
}

// zoneReadTools are list_zones, get_zone and export_zonefile.
func (s *Server) zoneReadTools() []kernel.Tool {
	return []kernel.Tool{
		argschema.Refine(kernel.NewTool(kernel.Spec[listZonesArgs, ZoneList]{
			Name: "list_zones", Title: "List zones", Policy: readOnly, Handle: s.listZones,
			Description: "List the DNS zones, one page at a time, optionally filtered by exact name, mode or label selector. " +
				"When the operator restricts the server to certain zones, other zones are left out: pages and counts describe only the zones the server may use.",
		}), listRules(zoneSortFields, maxPerPageZones, map[string]argschema.Rule{"name": zoneRule, "mode": modeRule, "label_selector": selectorRule})),
		argschema.Refine(kernel.NewTool(kernel.Spec[zoneArgs, zoneResult]{
			Name: "get_zone", Title: "Get a zone", Policy: readOnly, Handle: s.getZone,
			Description: "Get one zone: mode, default TTL, protection, record count, nameservers and delegation status. " +
				"With the local zone store the assigned nameservers are the local responder's names and no delegation is checked; " +
				"a zone the local store signs (DNSSEC) shows its public key and the DS records to give the parent zone.",
		}), map[string]argschema.Rule{"zone": zoneRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[exportArgs, kernel.Text]{
			Name: "export_zonefile", Title: "Export a zone file", Policy: readOnly, Handle: s.exportZonefile,
			Description: "Export a primary zone as a BIND zone file. It is the only backup there is: take one before import_zonefile. " +
				"A long file comes in parts: each names the next part's cursor and the SHA-256 of the whole file; call again with the cursor until the last part.",
		}), map[string]argschema.Rule{"zone": zoneRule, "cursor": argschema.MaxLen(64)}),
	}
}

// zoneWriteTools are the tools that change zones.
func (s *Server) zoneWriteTools() []kernel.Tool {
	return []kernel.Tool{
		argschema.Refine(kernel.NewTool(kernel.Spec[createZoneArgs, createZoneResult]{
			Name: "create_zone", Title: "Create a zone", Policy: createPolicy, Handle: s.createZone,
			Description: "Create a zone. A primary zone gets its SOA and NS records automatically and may start from a zone file; " +
				"a secondary zone needs primary_nameservers. " +
				"The local zone store keeps a secondary zone's primaries but does not transfer or serve it.",
		}), map[string]argschema.Rule{"name": zoneRule, "mode": modeRule, "ttl": argschema.All(argschema.Only("integer"), ttlRule), "labels": labelsRule,
			"primary_nameservers": nameserversRule, "zonefile": argschema.MaxLen(maxZonefileLen)}),
		argschema.Refine(kernel.NewTool(kernel.Spec[updateZoneArgs, zoneResult]{
			Name: "update_zone", Title: "Replace a zone's labels", Policy: overwritePolicy, Handle: s.updateZone,
			Description: "Replace all labels of a zone (labels are the only field that can be updated; send the full set).",
		}), map[string]argschema.Rule{"zone": zoneRule, "labels": labelsRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[zoneArgs, actionResult]{
			Name: "delete_zone", Title: "Delete a zone", Policy: deleteZonePolicy, Handle: s.deleteZone,
			Preview: s.previewDeleteZone,
			Action:  func(in zoneArgs) string { return fmt.Sprintf("delete zone %q and all its records", in.Zone) },
			Description: "Delete a zone with all its RRSets. The first call is refused with a confirmation token; " +
				"a delete-protected zone must first be unprotected with change_zone_protection.",
		}), map[string]argschema.Rule{"zone": zoneRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[importArgs, actionResult]{
			Name: "import_zonefile", Title: "Import a zone file", Policy: importPolicy, Handle: s.importZonefile,
			Preview: s.previewImport,
			Action: func(in importArgs) string {
				return fmt.Sprintf("replace every RRSet of zone %q with the zone file given", in.Zone)
			},
			Description: "Replace every RRSet of a primary zone with the contents of a BIND zone file. Take a backup with export_zonefile first. " +
				"The first call is refused with a confirmation token bound to this exact zone file.",
		}), map[string]argschema.Rule{"zone": zoneRule, "zonefile": zonefileRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[zoneTTLArgs, actionResult]{
			Name: "change_zone_ttl", Title: "Change a zone's default TTL", Policy: overwritePolicy, Handle: s.changeZoneTTL,
			Description: "Change the default TTL of a primary zone (used by RRSets without a TTL of their own).",
		}), map[string]argschema.Rule{"zone": zoneRule, "ttl": ttlRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[zoneProtectionArgs, actionResult]{
			Name: "change_zone_protection", Title: "Change a zone's delete protection", Policy: zoneProtectPol, Handle: s.changeZoneProtection,
			Preview: s.previewZoneProtection,
			Action: func(in zoneProtectionArgs) string {
				return fmt.Sprintf("remove the delete protection of zone %q", in.Zone)
			},
			Description: "Turn a zone's delete protection on (delete: true) or off (delete: false). " +
				"Turning it off is refused first with a confirmation token, like a deletion.",
		}), map[string]argschema.Rule{"zone": zoneRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[nameserversArgs, actionResult]{
			Name: "change_primary_nameservers", Title: "Change a secondary zone's primary nameservers", Policy: nameserversPol,
			Handle: s.changePrimaryNameservers, Preview: s.previewNameservers,
			Action: func(in nameserversArgs) string {
				return fmt.Sprintf("replace the primary nameservers of zone %q with the %d server(s) given", in.Zone, len(in.PrimaryNameservers))
			},
			Description: "Replace the primary nameservers a secondary zone is transferred from. " +
				"The first call is refused with a confirmation token bound to this exact server list. " +
				"The local zone store records the list; it does not transfer zones.",
		}), map[string]argschema.Rule{"zone": zoneRule, "primary_nameservers": nameserversRule}),
	}
}

func (s *Server) listZones(ctx context.Context, call *kernel.Call, in listZonesArgs) (ZoneList, error) {
	if err := in.check(zoneSortFields, maxPerPageZones); err != nil {
		return ZoneList{}, err
	}
	if err := checkEnum("mode", in.Mode, zoneModes); err != nil {
		return ZoneList{}, err
	}
	if in.Name != "" {
		if err := checkZone("name", in.Name); err != nil {
			return ZoneList{}, err
		}
	}
	if len(in.LabelSelector) > maxSelectorLen {
		return ZoneList{}, invalid("label_selector", "must be at most %d characters", maxSelectorLen)
	}
	if err := s.noLabels("label_selector", in.LabelSelector != ""); err != nil {
		return ZoneList{}, err
	}
	opts := ListZonesOptions{Name: in.Name, Mode: in.Mode, LabelSelector: in.LabelSelector,
		Sort: in.Sort, Page: in.Page, PerPage: in.PerPage}
	if s.restricted() {
		return s.listAllowedZones(ctx, opts, call)
	}
	if call.Authorizing() {
		return s.listPermittedZones(ctx, opts, call)
	}
	list, err := s.p.ListZones(ctx, opts)
	if err != nil {
		return ZoneList{}, mapError(err, subject{what: "zones"})
	}
	if list.Zones == nil {
		list.Zones = []Zone{}
	}
	return list, nil
}

func (s *Server) getZone(ctx context.Context, _ *kernel.Call, in zoneArgs) (zoneResult, error) {
	if s.restricted() {
		z, err := s.resolveZone(ctx, in.Zone)
		return zoneResult{Zone: z}, err
	}
	if err := checkZone("zone", in.Zone); err != nil {
		return zoneResult{}, err
	}
	z, err := s.p.GetZone(ctx, in.Zone)
	return zoneResult{Zone: z}, mapError(err, zoneSubject(in.Zone))
}

func (s *Server) exportZonefile(ctx context.Context, _ *kernel.Call, in exportArgs) (kernel.Text, error) {
	ref, err := s.zoneRef(ctx, in.Zone)
	if err != nil {
		return "", err
	}
	text, err := s.p.ExportZonefile(ctx, ref)
	if err != nil {
		return "", mapError(err, zoneSubject(in.Zone))
	}
	part, err := exportPart(in.Zone, text, in.Cursor)
	return kernel.Text(part), err
}

func (s *Server) createZone(ctx context.Context, call *kernel.Call, in createZoneArgs) (createZoneResult, error) {
	if err := checkZone("name", in.Name); err != nil {
		return createZoneResult{}, err
	}
	if !s.allowed(in.Name) {
		return createZoneResult{}, zoneDenied(in.Name)
	}
	req, err := in.request()
	if err != nil {
		return createZoneResult{}, err
	}
	z, a, err := s.caps.zones.CreateZone(ctx, req)
	if err != nil {
		return createZoneResult{}, mapError(err, zoneSubject(in.Name))
	}
	s.remember(z)
	res, err := s.follow(ctx, call, a)
	if err != nil {
		return createZoneResult{}, err
	}
	if res.Action != nil && res.Action.Status == ActionSuccess {
		// The zone as created, now that the action is done (record count,
		// status); the creation answer stands if it cannot be read.
		if now, err := s.p.GetZone(ctx, zoneKey(z)); err == nil {
			z = now
		}
	}
	return createZoneResult{Zone: z, Action: res.Action, Note: res.Note}, nil
}

func (in createZoneArgs) request() (CreateZoneRequest, error) {
	if in.Mode != ModePrimary && in.Mode != ModeSecondary {
		return CreateZoneRequest{}, invalid("mode", "must be primary or secondary")
	}
	if err := checkTTL(in.TTL); err != nil {
		return CreateZoneRequest{}, err
	}
	if err := checkLabels(in.Labels); err != nil {
		return CreateZoneRequest{}, err
	}
	if len(in.Zonefile) > maxZonefileLen {
		return CreateZoneRequest{}, invalid("zonefile", "must be at most %d bytes", maxZonefileLen)
	}
	req := CreateZoneRequest{Name: in.Name, Mode: in.Mode, TTL: in.TTL, Labels: in.Labels, Zonefile: in.Zonefile}
	if len(in.PrimaryNameservers) > 0 {
		ns, err := checkNameservers(in.PrimaryNameservers)
		if err != nil {
			return CreateZoneRequest{}, err
		}
		req.PrimaryNameservers = ns
	}
	return req, nil
}

func (s *Server) updateZone(ctx context.Context, _ *kernel.Call, in updateZoneArgs) (zoneResult, error) {
	if err := checkLabels(in.Labels); err != nil {
		return zoneResult{}, err
	}
	ref, err := s.zoneRef(ctx, in.Zone)
	if err != nil {
		return zoneResult{}, err
	}
	labels := in.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	z, err := s.caps.labels.UpdateZone(ctx, ref, labels)
	return zoneResult{Zone: z}, mapError(err, zoneSubject(in.Zone))
}

// zoneAction runs a zone mutation that returns an action on the zone the
// caller named (resolved and checked when an allowlist is active), and
// follows the action.
func (s *Server) zoneAction(ctx context.Context, call *kernel.Call, zone string,
	do func(ref string) (*Action, error)) (actionResult, error) {
	ref, err := s.zoneRef(ctx, zone)
	if err != nil {
		return actionResult{}, err
	}
	a, err := do(ref)
	if err != nil {
		return actionResult{}, mapError(err, zoneSubject(zone))
	}
	return s.follow(ctx, call, a)
}

func (s *Server) deleteZone(ctx context.Context, call *kernel.Call, in zoneArgs) (actionResult, error) {
	return s.zoneAction(ctx, call, in.Zone, func(ref string) (*Action, error) { return s.caps.zones.DeleteZone(ctx, ref) })
}

func (s *Server) importZonefile(ctx context.Context, call *kernel.Call, in importArgs) (actionResult, error) {
	if in.Zonefile == "" || len(in.Zonefile) > maxZonefileLen {
		return actionResult{}, invalid("zonefile", "must be 1 to %d bytes", maxZonefileLen)
	}
	// The import fails when any RRSet is change-protected: the hint names
	// the RRSet protection tool.
	sub := subject{what: fmt.Sprintf("zone %q", in.Zone), protection: "change_rrset_protection"}
	ref, err := s.zoneRef(ctx, in.Zone)
	if err != nil {
		return actionResult{}, err
	}
	a, err := s.caps.importer.ImportZonefile(ctx, ref, in.Zonefile)
	if err != nil {
		return actionResult{}, mapError(err, sub)
	}
	return s.follow(ctx, call, a)
}

func (s *Server) changeZoneTTL(ctx context.Context, call *kernel.Call, in zoneTTLArgs) (actionResult, error) {
	if err := checkTTL(&in.TTL); err != nil {
		return actionResult{}, err
	}
	return s.zoneAction(ctx, call, in.Zone, func(ref string) (*Action, error) { return s.caps.zones.ChangeZoneTTL(ctx, ref, in.TTL) })
}

func (s *Server) changeZoneProtection(ctx context.Context, call *kernel.Call, in zoneProtectionArgs) (actionResult, error) {
	return s.zoneAction(ctx, call, in.Zone, func(ref string) (*Action, error) {
		return s.caps.protection.ChangeZoneProtection(ctx, ref, in.Delete)
	})
}

func (s *Server) changePrimaryNameservers(ctx context.Context, call *kernel.Call, in nameserversArgs) (actionResult, error) {
	ns, err := checkNameservers(in.PrimaryNameservers)
	if err != nil {
		return actionResult{}, err
	}
	return s.zoneAction(ctx, call, in.Zone, func(ref string) (*Action, error) {
		return s.caps.secondaries.ChangePrimaryNameservers(ctx, ref, ns)
	})
}

// zoneKey is the canonical confirmation target of a zone: its id.
func zoneKey(z Zone) string { return strconv.FormatInt(z.ID, 10) }
