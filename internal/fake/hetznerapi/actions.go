package hetznerapi

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// ActionOutcome scripts how one future action ends.
type ActionOutcome struct {
	// Stay keeps the action running until CompleteActions or FinishAction.
	Stay bool
	// ErrorCode, when set, makes the action end in status "error" with this
	// code and ErrorMessage; the mutation it stands for is not applied.
	ErrorCode    string
	ErrorMessage string
}

// action is the fake's state of one action.
type action struct {
	Action
	zoneID  int64
	polls   int
	outcome ActionOutcome
}

var actionSortFields = []string{"id", "command", "status", "started", "finished"}

// ScriptActions queues outcomes for the next actions created, in order.
// Actions beyond the queue succeed.
func (s *Server) ScriptActions(outcomes ...ActionOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = append(s.scripts, outcomes...)
}

// FailNextAction makes the next action end in error with code and message.
func (s *Server) FailNextAction(code, message string) {
	s.ScriptActions(ActionOutcome{ErrorCode: code, ErrorMessage: message})
}

// CompleteActions finishes every running action as scripted and returns how
// many it finished.
func (s *Server) CompleteActions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.actions {
		if a.Status == StatusRunning {
			s.finish(a)
			n++
		}
	}
	return n
}

// FinishAction finishes one running action as scripted; false if there is
// no such running action.
func (s *Server) FinishAction(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.actions[id]
	if !ok || a.Status != StatusRunning {
		return false
	}
	s.finish(a)
	return true
}

// Actions returns a snapshot of every action, by id.
func (s *Server) Actions() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Action, 0, len(s.actions))
	for _, a := range s.actions {
		out = append(out, a.snapshot())
	}
	slices.SortFunc(out, func(a, b Action) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// begin records a running action for command on zone; apply is false when
// the action is scripted to fail, so the caller must leave state alone.
func (s *Server) begin(command string, zoneID int64) (a *action, apply bool) {
	s.nextAction++
	a = &action{Action: Action{ID: s.nextAction, Command: command, Status: StatusRunning,
		Started: s.now(), Resources: []ActionResource{{ID: zoneID, Type: "zone"}}}, zoneID: zoneID}
	if len(s.scripts) > 0 {
		a.outcome, s.scripts = s.scripts[0], s.scripts[1:]
	}
	if s.opts.ManualActions {
		a.outcome.Stay = true
	}
	s.actions[a.ID] = a
	s.runningN[zoneID]++
	return a, a.outcome.ErrorCode == ""
}

func (s *Server) finish(a *action) {
	now := s.now()
	a.Progress, a.Finished = 100, &now
	if s.runningN[a.zoneID]--; s.runningN[a.zoneID] <= 0 {
		delete(s.runningN, a.zoneID)
	}
	if a.outcome.ErrorCode != "" {
		a.Status = StatusError
		a.Error = &ActionError{Code: a.outcome.ErrorCode, Message: a.outcome.ErrorMessage}
		return
	}
	a.Status = StatusSuccess
}

// poll counts one GET of a; the ActionPolls-th GET finishes it.
func (s *Server) poll(a *action) {
	if a.Status != StatusRunning || a.outcome.Stay {
		return
	}
	a.polls++
	if a.polls >= s.opts.ActionPolls {
		s.finish(a)
	}
}

// running reports whether zone has a running action.
func (s *Server) running(zoneID int64) bool {
	return s.runningN[zoneID] > 0
}

// checkLocked answers 423 locked when scripted (Options.LockWhileRunning).
func (s *Server) checkLocked(zoneID int64) *apiError {
	if s.opts.LockWhileRunning && s.running(zoneID) {
		return newError(CodeLocked, "another action is running on the zone")
	}
	return nil
}

func actionAnswer(a *action) map[string]any {
	return map[string]any{"action": a.snapshot()}
}

func getAction(s *Server, c *call) (int, any, *apiError) {
	a := s.actionByParam(c.params["id"])
	if a == nil {
		return 0, nil, notFound("action")
	}
	s.poll(a)
	return 200, actionAnswer(a), nil
}

func getZoneAction(s *Server, c *call) (int, any, *apiError) {
	z, e := s.zoneParam(c)
	if e != nil {
		return 0, nil, e
	}
	a := s.actionByParam(c.params["a"])
	if a == nil || a.zoneID != z.ID {
		return 0, nil, notFound("action")
	}
	s.poll(a)
	return 200, actionAnswer(a), nil
}

func (s *Server) actionByParam(p string) *action {
	id, err := strconv.ParseInt(p, 10, 64)
	if err != nil {
		return nil
	}
	return s.actions[id]
}

// listActions serves GET /zones/actions; an id filter counts as a GET of
// each listed action (that is how hcloud-go waits).
func listActions(s *Server, c *call) (int, any, *apiError) {
	return s.listActionsWhere(c, 0)
}

// listRootActions serves GET /actions, which requires an id filter.
func listRootActions(s *Server, c *call) (int, any, *apiError) {
	if len(c.q["id"]) == 0 {
		return 0, nil, invalidField("id", "is required")
	}
	return s.listActionsWhere(c, 0)
}

func listZoneActions(s *Server, c *call) (int, any, *apiError) {
	z, e := s.zoneParam(c)
	if e != nil {
		return 0, nil, e
	}
	return s.listActionsWhere(c, z.ID)
}

func (s *Server) listActionsWhere(c *call, zoneID int64) (int, any, *apiError) {
	ids, e := idFilter(c)
	if e != nil {
		return 0, nil, e
	}
	statuses := c.q["status"]
	for _, st := range statuses {
		if st != StatusRunning && st != StatusSuccess && st != StatusError {
			return 0, nil, invalidField("status", "invalid status "+quoteShort(st))
		}
	}
	keys, e := parseSort(c, actionSortFields)
	if e != nil {
		return 0, nil, e
	}
	var list []*action
	for _, a := range s.actions {
		if (zoneID == 0 || a.zoneID == zoneID) && (ids == nil || slices.Contains(ids, a.ID)) {
			list = append(list, a)
		}
	}
	if ids != nil {
		for _, a := range list {
			s.poll(a)
		}
	}
	out := make([]Action, 0, len(list))
	for _, a := range list {
		if len(statuses) == 0 || slices.Contains(statuses, a.Status) {
			out = append(out, a.snapshot())
		}
	}
	sortItems(out, keys, compareAction, "id")
	page, meta, e := paginate(s, c, out, maxPerPage)
	if e != nil {
		return 0, nil, e
	}
	return 200, map[string]any{"actions": page, "meta": meta}, nil
}

func idFilter(c *call) ([]int64, *apiError) {
	var ids []int64
	for _, v := range c.q["id"] {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return nil, invalidField("id", "must be a positive integer")
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func compareAction(a, b Action, field string) int {
	switch field {
	case "command":
		return cmp.Compare(a.Command, b.Command)
	case "status":
		return cmp.Compare(a.Status, b.Status)
	case "started":
		return a.Started.Compare(b.Started)
	case "finished":
		return compareFinished(a.Finished, b.Finished)
	}
	return cmp.Compare(a.ID, b.ID)
}

// compareFinished orders unfinished (null) actions last.
func compareFinished(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return a.Compare(*b)
}
