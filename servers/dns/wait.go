package dns

import (
	"context"
	"fmt"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// actionResult is what a tool that started an action returns: the action
// in its last known state and, when it is still running, how to follow it.
type actionResult struct {
	Action *Action `json:"action,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// follow polls a just-started action every ActionPoll until it succeeds,
// fails or ActionWait has passed, reporting progress while it runs. An
// action that fails is a tool error (upstream_error) carrying the
// provider's account as upstream text; one still running at the deadline
// is returned with a note saying how to check on it.
func (s *Server) follow(ctx context.Context, call *kernel.Call, a *Action) (actionResult, error) {
	if a == nil {
		return actionResult{}, nil
	}
	cur := *a
	if s.caps.actions == nil {
		// A provider without an action log finishes before it returns.
		return actionResult{Action: &cur}, nil
	}
	deadline := s.now().Add(s.cfg.ActionWait)
	for cur.Status == ActionRunning {
		s.progress(ctx, call, cur)
		if !s.now().Before(deadline) {
			return actionResult{Action: &cur, Note: fmt.Sprintf(
				"The action is still running after %v. Check on it with get_zone_action (action_id %d).",
				s.cfg.ActionWait, cur.ID)}, nil
		}
		if err := s.sleep(ctx, s.cfg.ActionPoll); err != nil {
			return actionResult{}, err
		}
		next, err := s.caps.actions.GetAction(ctx, cur.ID)
		if err != nil {
			return actionResult{}, mapError(err, actionSubject(cur.ID))
		}
		cur = next
	}
	if cur.Status == ActionError {
		return actionResult{}, actionFailed(cur)
	}
	return actionResult{Action: &cur}, nil
}

func (s *Server) progress(ctx context.Context, call *kernel.Call, a Action) {
	if call == nil {
		return
	}
	call.Progress(ctx, float64(min(max(a.Progress, 0), 99)), 100, "action "+plainCommand(a.Command)+" running")
}

// plainCommand is the action's command if it looks like one (the commands
// are undocumented upstream text); "(unnamed)" otherwise.
func plainCommand(c string) string {
	if c == "" || len(c) > 64 {
		return "(unnamed)"
	}
	for i := 0; i < len(c); i++ {
		if !(c[i] >= 'a' && c[i] <= 'z' || c[i] == '_') {
			return "(unnamed)"
		}
	}
	return c
}

func actionFailed(a Action) *kernel.Error {
	e := kernel.Errorf(kernel.UpstreamError, "The provider's action %d ended in error; the change was not applied as asked.", a.ID).
		WithHint("Read the current state (get_zone, get_rrset) before retrying.")
	if a.Error != nil {
		e = e.WithUpstream(a.Error.Code + ": " + a.Error.Message)
	}
	return e
}
