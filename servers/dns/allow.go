package dns

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// The zone allowlist (Config.AllowZones). Tokens reach every zone of their
// project; the allowlist is the only narrower scope. Its rules:
//
//   - a zone argument (id or name) is resolved through GetZone and its NAME
//     is checked; a name outside the list is refused before any request;
//   - the refusal is one message for "outside the list" and "does not
//     exist", so it never confirms that a zone exists;
//   - list_zones drops zones outside the list (a page may then hold fewer
//     than per_page items; how many were dropped is not said);
//   - list_zone_actions needs a zone while the list is active;
//   - get_zone_action checks every zone the action names; zone ids seen
//     while resolving are remembered, so the delete action of an allowed
//     zone stays readable after the zone is gone.

// maxKnown bounds the id -> name memory.
const maxKnown = 10_000

func (s *Server) restricted() bool { return s.allow != nil }

func (s *Server) allowed(name string) bool {
	return s.allow == nil || s.allow[normalizeZone(name)]
}

// zoneDenied is the refusal for a zone outside the allowlist or unknown.
func zoneDenied(zone string) *kernel.Error {
	return kernel.Errorf(kernel.PermissionDenied, "Zone %q is not available to this server: it does not exist, or the server may not use it.", zone).
		WithHint("The operator restricts this server to certain zones; list_zones shows the ones it may use.")
}

// isID reports whether a zone argument is a numeric id (zone names always
// hold a dot, so a digits-only argument is never a name).
func isID(zone string) bool {
	if zone == "" || len(zone) > 19 {
		return false
	}
	for i := 0; i < len(zone); i++ {
		if zone[i] < '0' || zone[i] > '9' {
			return false
		}
	}
	return true
}

// resolveZone validates a zone argument, reads the zone and checks it
// against the allowlist.
func (s *Server) resolveZone(ctx context.Context, zone string) (Zone, error) {
	if err := checkZone("zone", zone); err != nil {
		return Zone{}, err
	}
	if s.restricted() && !isID(zone) && !s.allowed(zone) {
		return Zone{}, zoneDenied(zone)
	}
	z, err := s.p.GetZone(ctx, zone)
	if err != nil {
		var pe *Error
		if s.restricted() && errors.As(err, &pe) && pe.Code == "not_found" {
			return Zone{}, zoneDenied(zone)
		}
		return Zone{}, mapError(err, zoneSubject(zone))
	}
	s.remember(z)
	if !s.allowed(z.Name) {
		return Zone{}, zoneDenied(zone)
	}
	return z, nil
}

// zoneRef is the zone argument to pass to the provider. Without an
// allowlist it is the caller's (validated) argument, and no extra request is
// made; with one, the zone is resolved and checked, and its id is used, so
// the provider acts on exactly the zone that was checked.
func (s *Server) zoneRef(ctx context.Context, zone string) (string, error) {
	if !s.restricted() {
		return zone, checkZone("zone", zone)
	}
	z, err := s.resolveZone(ctx, zone)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(z.ID, 10), nil
}

func (s *Server) remember(z Zone) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.known) >= maxKnown {
		clear(s.known)
	}
	s.known[z.ID] = z.Name
}

// zoneNameByID finds an action's zone: from GetZone, or for a deleted zone
// from what was resolved before.
func (s *Server) zoneNameByID(ctx context.Context, id int64) (string, bool, error) {
	z, err := s.p.GetZone(ctx, strconv.FormatInt(id, 10))
	if err == nil {
		s.remember(z)
		return z.Name, true, nil
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != "not_found" {
		return "", false, mapError(err, subject{what: fmt.Sprintf("zone %d", id)})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name, ok := s.known[id]
	return name, ok, nil
}

// checkAction refuses an action that touches a zone outside the allowlist
// or one the authorization policy does not let the caller use, or a zone
// the server cannot name.
func (s *Server) checkAction(ctx context.Context, call *kernel.Call, a Action) error {
	if !s.restricted() && !call.Authorizing() {
		return nil
	}
	zones := 0
	for _, r := range a.Resources {
		if r.Type != "zone" {
			continue
		}
		zones++
		name, ok, err := s.zoneNameByID(ctx, r.ID)
		if err != nil {
			return err
		}
		if !ok || !s.allowed(name) || !call.Permits(zoneResource(name, r.ID)) {
			return actionDenied(a.ID)
		}
	}
	if zones == 0 {
		return actionDenied(a.ID)
	}
	return nil
}

func actionDenied(id int64) *kernel.Error {
	return kernel.Errorf(kernel.PermissionDenied, "Action %d is not available to this server: it does not exist, or it belongs to a zone the server may not use.", id).
		WithHint("The operator restricts this server to certain zones; list_zone_actions with a zone shows that zone's actions.")
}
