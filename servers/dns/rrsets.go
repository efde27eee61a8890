package dns

import (
	"context"
	"fmt"
	"slices"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

// Arguments of the RRSet tools.
type (
	rrsetArgs struct {
		Zone string `json:"zone" jsonschema:"the zone's id or name, e.g. 4711 or example.com"`
		Name string `json:"name" jsonschema:"the RRSet's name relative to the zone: @ for the apex, www, *.dev"`
		Type string `json:"type" jsonschema:"the record type"`
	}
	listRRSetsArgs struct {
		Zone          string   `json:"zone" jsonschema:"the zone's id or name"`
		Name          string   `json:"name,omitempty" jsonschema:"only the RRSet with exactly this name (@ for the apex)"`
		Types         []string `json:"type,omitempty" jsonschema:"only RRSets of these types"`
		LabelSelector string   `json:"label_selector,omitempty" jsonschema:"only RRSets whose labels match, e.g. env=prod"`
		listArgs
	}
	createRRSetArgs struct {
		Zone    string            `json:"zone" jsonschema:"the zone's id or name"`
		Name    string            `json:"name" jsonschema:"the RRSet's name relative to the zone: @ for the apex"`
		Type    string            `json:"type" jsonschema:"the record type"`
		Records []Record          `json:"records" jsonschema:"the records, at least one"`
		TTL     *int              `json:"ttl,omitempty" jsonschema:"TTL in seconds; the zone's default when omitted"`
		Labels  map[string]string `json:"labels,omitempty" jsonschema:"labels, key to value"`
	}
	updateRRSetArgs struct {
		Zone   string            `json:"zone" jsonschema:"the zone's id or name"`
		Name   string            `json:"name" jsonschema:"the RRSet's name relative to the zone"`
		Type   string            `json:"type" jsonschema:"the record type"`
		Labels map[string]string `json:"labels" jsonschema:"the new labels; they replace all current labels"`
	}
	recordsArgs struct {
		Zone    string   `json:"zone" jsonschema:"the zone's id or name"`
		Name    string   `json:"name" jsonschema:"the RRSet's name relative to the zone"`
		Type    string   `json:"type" jsonschema:"the record type"`
		Records []Record `json:"records" jsonschema:"the records, at least one"`
	}
	addRecordsArgs struct {
		Zone    string   `json:"zone" jsonschema:"the zone's id or name"`
		Name    string   `json:"name" jsonschema:"the RRSet's name relative to the zone"`
		Type    string   `json:"type" jsonschema:"the record type"`
		Records []Record `json:"records" jsonschema:"the records to add, at least one"`
		TTL     *int     `json:"ttl,omitempty" jsonschema:"TTL in seconds, applied as the provider applies it (at least when the RRSet is created)"`
	}
	rrsetTTLArgs struct {
		Zone string `json:"zone" jsonschema:"the zone's id or name"`
		Name string `json:"name" jsonschema:"the RRSet's name relative to the zone"`
		Type string `json:"type" jsonschema:"the record type"`
		TTL  *int   `json:"ttl" jsonschema:"the new TTL in seconds, or null for the zone's default"`
	}
	rrsetProtectionArgs struct {
		Zone   string `json:"zone" jsonschema:"the zone's id or name"`
		Name   string `json:"name" jsonschema:"the RRSet's name relative to the zone"`
		Type   string `json:"type" jsonschema:"the record type"`
		Change bool   `json:"change" jsonschema:"true turns change protection on; false turns it off (asks for confirmation)"`
	}
)

// Results of the RRSet tools.
type (
	rrsetResult struct {
		RRSet RRSet `json:"rrset"`
	}
	createRRSetResult struct {
		RRSet  RRSet   `json:"rrset"`
		Action *Action `json:"action,omitempty"`
		Note   string  `json:"note,omitempty"`
	}
)

func rrsetLabel(in rrsetArgs) string {
	return fmt.Sprintf("RRSet %q of zone %q", in.Name+"/"+in.Type, in.Zone)
}

func (s *Server) rrsetTools() []kernel.Tool {
	return append(s.rrsetReadTools(), s.rrsetWriteTools()...)
}

// rrsetReadTools are list_rrsets and get_rrset.
func (s *Server) rrsetReadTools() []kernel.Tool {
	return []kernel.Tool{
		argschema.Refine(kernel.NewTool(kernel.Spec[listRRSetsArgs, RRSetList]{
			Name: "list_rrsets", Title: "List RRSets", Policy: readOnly, Handle: s.listRRSets,
			Description: "List the RRSets (all records of one name and type) of a primary zone, one page at a time, " +
				"optionally filtered by exact name, types or label selector.",
		}), listRules(rrsetSortFields, maxPerPageRRSet, map[string]argschema.Rule{"zone": zoneRule, "name": rrsetNameRule,
			"type": argschema.All(argschema.Only("array"), argschema.MaxItems(len(RRSetTypes)), argschema.ItemsOf(typeRule)), "label_selector": selectorRule})),
		argschema.Refine(kernel.NewTool(kernel.Spec[rrsetArgs, rrsetResult]{
			Name: "get_rrset", Title: "Get an RRSet", Policy: readOnly, Handle: s.getRRSet,
			Description: "Get one RRSet: its records with their comments, TTL, labels and protection.",
		}), rrsetRules(nil)),
	}
}

// rrsetWriteTools are the tools that change RRSets and records.
func (s *Server) rrsetWriteTools() []kernel.Tool {
	recs := rrsetRules(map[string]argschema.Rule{"records": recordsRule})
	return []kernel.Tool{
		argschema.Refine(kernel.NewTool(kernel.Spec[createRRSetArgs, createRRSetResult]{
			Name: "create_rrset", Title: "Create an RRSet", Policy: createPolicy, Handle: s.createRRSet,
			Description: "Create an RRSet that does not exist yet. For an existing one use add_records or set_records.",
		}), rrsetRules(map[string]argschema.Rule{"records": recordsRule, "ttl": argschema.All(argschema.Only("integer"), ttlRule), "labels": labelsRule})),
		argschema.Refine(kernel.NewTool(kernel.Spec[updateRRSetArgs, rrsetResult]{
			Name: "update_rrset", Title: "Replace an RRSet's labels", Policy: overwritePolicy, Handle: s.updateRRSet,
			Description: "Replace all labels of an RRSet (send the full set). Records are changed with the record tools.",
		}), rrsetRules(map[string]argschema.Rule{"labels": labelsRule})),
		argschema.Refine(kernel.NewTool(kernel.Spec[rrsetArgs, actionResult]{
			Name: "delete_rrset", Title: "Delete an RRSet", Policy: deleteRRSetPol, Handle: s.deleteRRSet,
			Preview: s.previewDeleteRRSet, Action: func(in rrsetArgs) string { return "delete " + rrsetLabel(in) },
			Description: "Delete an RRSet with all its records. The first call is refused with a confirmation token.",
		}), rrsetRules(nil)),
		argschema.Refine(kernel.NewTool(kernel.Spec[recordsArgs, actionResult]{
			Name: "set_records", Title: "Replace an RRSet's records", Policy: setRecordsPol, Handle: s.setRecords,
			Preview: s.previewSetRecords,
			Action: func(in recordsArgs) string {
				return fmt.Sprintf("replace the records of %s with the %d record(s) given", rrsetLabel(in.rrset()), len(in.Records))
			},
			Description: "Replace all records of an existing RRSet. The first call is refused with a confirmation token bound to this exact record list.",
		}), recs),
		argschema.Refine(kernel.NewTool(kernel.Spec[addRecordsArgs, actionResult]{
			Name: "add_records", Title: "Add records", Policy: createPolicy, Handle: s.addRecords,
			Description: "Add records to an RRSet, creating it when it does not exist.",
		}), rrsetRules(map[string]argschema.Rule{"records": recordsRule, "ttl": argschema.All(argschema.Only("integer"), ttlRule)})),
		argschema.Refine(kernel.NewTool(kernel.Spec[recordsArgs, actionResult]{
			Name: "remove_records", Title: "Remove records", Policy: removeRecordsPol, Handle: s.removeRecords,
			Preview: s.previewRemoveRecords,
			Action: func(in recordsArgs) string {
				return fmt.Sprintf("remove the %d record(s) given from %s", len(in.Records), rrsetLabel(in.rrset()))
			},
			Description: "Remove records (matched by value) from an RRSet; an RRSet left empty is deleted. " +
				"The first call is refused with a confirmation token bound to this exact record list.",
		}), recs),
		argschema.Refine(kernel.NewTool(kernel.Spec[recordsArgs, actionResult]{
			Name: "update_records", Title: "Change record comments", Policy: overwritePolicy, Handle: s.updateRecords,
			Description: "Change only the comments of existing records: each value must match a record of the RRSet; its comment is replaced (an omitted comment clears it).",
		}), recs),
		argschema.Refine(kernel.NewTool(kernel.Spec[rrsetTTLArgs, actionResult]{
			Name: "change_rrset_ttl", Title: "Change an RRSet's TTL", Policy: overwritePolicy, Handle: s.changeRRSetTTL,
			Description: "Change the TTL of an RRSet; null returns it to the zone's default TTL.",
		}), rrsetRules(map[string]argschema.Rule{"ttl": ttlRule})),
		argschema.Refine(kernel.NewTool(kernel.Spec[rrsetProtectionArgs, actionResult]{
			Name: "change_rrset_protection", Title: "Change an RRSet's change protection", Policy: rrsetProtectPol,
			Handle: s.changeRRSetProtection, Preview: s.previewRRSetProtection,
			Action: func(in rrsetProtectionArgs) string {
				return "remove the change protection of " + rrsetLabel(rrsetArgs{Zone: in.Zone, Name: in.Name, Type: in.Type})
			},
			Description: "Turn an RRSet's change protection (which blocks changes and deletion) on (change: true) or off (change: false). " +
				"Turning it off is refused first with a confirmation token, like a deletion.",
		}), rrsetRules(nil)),
	}
}

func (in recordsArgs) rrset() rrsetArgs {
	return rrsetArgs{Zone: in.Zone, Name: in.Name, Type: in.Type}
}

func (s *Server) listRRSets(ctx context.Context, _ *kernel.Call, in listRRSetsArgs) (RRSetList, error) {
	if err := in.check(rrsetSortFields, maxPerPageRRSet); err != nil {
		return RRSetList{}, err
	}
	if in.Name != "" {
		if err := validRRSetName(in.Name); err != nil {
			return RRSetList{}, invalid("name", "%v", err)
		}
	}
	for _, t := range in.Types {
		if !slices.Contains(RRSetTypes, t) {
			return RRSetList{}, invalid("type", "%q is not a record type", t)
		}
	}
	if len(in.LabelSelector) > maxSelectorLen {
		return RRSetList{}, invalid("label_selector", "must be at most %d characters", maxSelectorLen)
	}
	if err := s.noLabels("label_selector", in.LabelSelector != ""); err != nil {
		return RRSetList{}, err
	}
	ref, err := s.zoneRef(ctx, in.Zone)
	if err != nil {
		return RRSetList{}, err
	}
	list, err := s.p.ListRRSets(ctx, ref, ListRRSetsOptions{Name: in.Name, Types: in.Types, LabelSelector: in.LabelSelector,
		Sort: in.Sort, Page: in.Page, PerPage: in.PerPage})
	if list.RRSets == nil {
		list.RRSets = []RRSet{}
	}
	for i := range list.RRSets {
		presentValues(&list.RRSets[i])
	}
	return list, mapError(err, zoneSubject(in.Zone))
}

// rrsetRef validates the triple and resolves the zone argument.
func (s *Server) rrsetRef(ctx context.Context, zone, name, typ string) (string, error) {
	if err := checkRRSet(zone, name, typ); err != nil {
		return "", err
	}
	return s.zoneRef(ctx, zone)
}

func (s *Server) getRRSet(ctx context.Context, _ *kernel.Call, in rrsetArgs) (rrsetResult, error) {
	ref, err := s.rrsetRef(ctx, in.Zone, in.Name, in.Type)
	if err != nil {
		return rrsetResult{}, err
	}
	rs, err := s.p.GetRRSet(ctx, ref, in.Name, in.Type)
	presentValues(&rs)
	return rrsetResult{RRSet: rs}, mapError(err, rrsetSubject(in.Zone, in.Name, in.Type))
}

func (s *Server) createRRSet(ctx context.Context, call *kernel.Call, in createRRSetArgs) (createRRSetResult, error) {
	if err := firstErr(checkRecords(in.Records), checkTTL(in.TTL), checkLabels(in.Labels),
		s.noLabels("labels", len(in.Labels) > 0), s.noComments(in.Records)); err != nil {
		return createRRSetResult{}, err
	}
	ref, err := s.rrsetRef(ctx, in.Zone, in.Name, in.Type)
	if err != nil {
		return createRRSetResult{}, err
	}
	rs, a, err := s.p.CreateRRSet(ctx, ref, CreateRRSetRequest{Name: in.Name, Type: in.Type, TTL: in.TTL, Labels: in.Labels, Records: in.Records})
	if err != nil {
		return createRRSetResult{}, mapError(err, rrsetSubject(in.Zone, in.Name, in.Type))
	}
	res, err := s.follow(ctx, call, a)
	return createRRSetResult{RRSet: rs, Action: res.Action, Note: res.Note}, err
}

func (s *Server) updateRRSet(ctx context.Context, _ *kernel.Call, in updateRRSetArgs) (rrsetResult, error) {
	if err := checkLabels(in.Labels); err != nil {
		return rrsetResult{}, err
	}
	ref, err := s.rrsetRef(ctx, in.Zone, in.Name, in.Type)
	if err != nil {
		return rrsetResult{}, err
	}
	labels := in.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	rs, err := s.caps.labels.UpdateRRSet(ctx, ref, in.Name, in.Type, labels)
	return rrsetResult{RRSet: rs}, mapError(err, rrsetSubject(in.Zone, in.Name, in.Type))
}

// rrsetAction runs an RRSet mutation that returns an action and follows it.
func (s *Server) rrsetAction(ctx context.Context, call *kernel.Call, zone, name, typ string, pre error,
	do func(ref string) (*Action, error)) (actionResult, error) {
	if pre != nil {
		return actionResult{}, pre
	}
	ref, err := s.rrsetRef(ctx, zone, name, typ)
	if err != nil {
		return actionResult{}, err
	}
	a, err := do(ref)
	if err != nil {
		return actionResult{}, mapError(err, rrsetSubject(zone, name, typ))
	}
	return s.follow(ctx, call, a)
}

func (s *Server) deleteRRSet(ctx context.Context, call *kernel.Call, in rrsetArgs) (actionResult, error) {
	return s.rrsetAction(ctx, call, in.Zone, in.Name, in.Type, nil, func(ref string) (*Action, error) {
		return s.p.DeleteRRSet(ctx, ref, in.Name, in.Type)
	})
}

func (s *Server) setRecords(ctx context.Context, call *kernel.Call, in recordsArgs) (actionResult, error) {
	return s.rrsetAction(ctx, call, in.Zone, in.Name, in.Type, firstErr(checkRecords(in.Records), s.noComments(in.Records)), func(ref string) (*Action, error) {
		return s.p.SetRecords(ctx, ref, in.Name, in.Type, in.Records)
	})
}

func (s *Server) addRecords(ctx context.Context, call *kernel.Call, in addRecordsArgs) (actionResult, error) {
	return s.rrsetAction(ctx, call, in.Zone, in.Name, in.Type, firstErr(checkRecords(in.Records), checkTTL(in.TTL), s.noComments(in.Records)),
		func(ref string) (*Action, error) {
			return s.p.AddRecords(ctx, ref, in.Name, in.Type, in.Records, in.TTL)
		})
}

func (s *Server) removeRecords(ctx context.Context, call *kernel.Call, in recordsArgs) (actionResult, error) {
	return s.rrsetAction(ctx, call, in.Zone, in.Name, in.Type, checkRecords(in.Records), func(ref string) (*Action, error) {
		return s.p.RemoveRecords(ctx, ref, in.Name, in.Type, in.Records)
	})
}

func (s *Server) updateRecords(ctx context.Context, call *kernel.Call, in recordsArgs) (actionResult, error) {
	return s.rrsetAction(ctx, call, in.Zone, in.Name, in.Type, checkRecords(in.Records), func(ref string) (*Action, error) {
		return s.caps.comments.UpdateRecords(ctx, ref, in.Name, in.Type, in.Records)
	})
}

func (s *Server) changeRRSetTTL(ctx context.Context, call *kernel.Call, in rrsetTTLArgs) (actionResult, error) {
	return s.rrsetAction(ctx, call, in.Zone, in.Name, in.Type, checkTTL(in.TTL), func(ref string) (*Action, error) {
		return s.p.ChangeRRSetTTL(ctx, ref, in.Name, in.Type, in.TTL)
	})
}

func (s *Server) changeRRSetProtection(ctx context.Context, call *kernel.Call, in rrsetProtectionArgs) (actionResult, error) {
	return s.rrsetAction(ctx, call, in.Zone, in.Name, in.Type, nil, func(ref string) (*Action, error) {
		return s.caps.protection.ChangeRRSetProtection(ctx, ref, in.Name, in.Type, in.Change)
	})
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
