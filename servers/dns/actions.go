package dns

import (
	"context"
	"errors"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

// Arguments of the action tools.
type (
	listActionsArgs struct {
		Zone   string   `json:"zone,omitempty" jsonschema:"the zone's id or name; all zones when omitted (required when the server is restricted to certain zones)"`
		Status []string `json:"status,omitempty" jsonschema:"only actions in these states"`
		listArgs
	}
	getActionArgs struct {
		ActionID int64 `json:"action_id" jsonschema:"the action's id, as a tool's result or list_zone_actions gave it"`
	}
)

// getActionResult is get_zone_action's result.
type getActionResult struct {
	Action Action `json:"action"`
}

func (s *Server) actionTools() []kernel.Tool {
	return []kernel.Tool{
		argschema.Refine(kernel.NewTool(kernel.Spec[listActionsArgs, ActionList]{
			Name: "list_zone_actions", Title: "List zone actions", Policy: readOnly, Handle: s.listZoneActions,
			Description: "List the actions (running and finished changes) of one zone, or of every zone, one page at a time, optionally by status. " +
				"The local zone store completes every change at once and keeps the last 1,000 actions per zone.",
		}), listRules(actionSortFields, maxPerPageZones, map[string]argschema.Rule{"zone": zoneRule,
			"status": argschema.All(argschema.Only("array"), argschema.MaxItems(maxStatuses), argschema.ItemsOf(argschema.Enum(actionStatuses)))})),
		argschema.Refine(kernel.NewTool(kernel.Spec[getActionArgs, getActionResult]{
			Name: "get_zone_action", Title: "Get a zone action", Policy: readOnly, Handle: s.getZoneAction,
			Description: "Get one action by id: its command, status, progress and, if it failed, the provider's error. " +
				"Use it to check on an action a tool returned as still running.",
		}), map[string]argschema.Rule{"action_id": func(p *jsonschema.Schema) { p.Minimum = f64p(1) }}),
	}
}

func (s *Server) listZoneActions(ctx context.Context, call *kernel.Call, in listActionsArgs) (ActionList, error) {
	if err := in.check(actionSortFields, maxPerPageZones); err != nil {
		return ActionList{}, err
	}
	if len(in.Status) > maxStatuses {
		return ActionList{}, invalid("status", "at most %d states", maxStatuses)
	}
	for _, st := range in.Status {
		if !slices.Contains(actionStatuses, st) {
			return ActionList{}, invalid("status", "%q is not one of running, success, error", st)
		}
	}
	opts := ListActionsOptions{Status: in.Status, Sort: in.Sort, Page: in.Page, PerPage: in.PerPage}
	sub := subject{what: "actions"}
	switch {
	case in.Zone != "":
		ref, err := s.zoneRef(ctx, in.Zone)
		if err != nil {
			return ActionList{}, err
		}
		opts.Zone, sub = ref, zoneSubject(in.Zone)
	case s.restricted():
		return ActionList{}, invalid("zone", "name a zone: this server is restricted to certain zones")
	case call.Authorizing():
		return ActionList{}, invalid("zone", "name a zone: an authorization policy decides which zones each caller may use")
	}
	list, err := s.caps.actions.ListActions(ctx, opts)
	if list.Actions == nil {
		list.Actions = []Action{}
	}
	return list, mapError(err, sub)
}

func (s *Server) getZoneAction(ctx context.Context, call *kernel.Call, in getActionArgs) (getActionResult, error) {
	if in.ActionID < 1 {
		return getActionResult{}, invalid("action_id", "must be a positive integer")
	}
	a, err := s.caps.actions.GetAction(ctx, in.ActionID)
	if err != nil {
		var pe *Error
		if (s.restricted() || call.Authorizing()) && errors.As(err, &pe) && pe.Code == "not_found" {
			return getActionResult{}, actionDenied(in.ActionID)
		}
		return getActionResult{}, mapError(err, actionSubject(in.ActionID))
	}
	if err := s.checkAction(ctx, call, a); err != nil {
		return getActionResult{}, err
	}
	return getActionResult{Action: a}, nil
}
