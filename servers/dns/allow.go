package dns

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// The zone allowlist (Config.AllowZones). Tokens reach every zone of their
// project; the allowlist is the only narrower scope. Its rules:
//
//   - a zone argument (id or name) is resolved through GetZone and its NAME
//     is checked; a name outside the list is refused before any request;
//   - the refusal is one message for "outside the list" and "does not
//     exist", so it never confirms that a zone exists;
//   - list_zones lists only zones on the list: each allowed zone is looked
//     up by name with the caller's filters, and the page, its order and
//     meta.pagination are computed over those alone, so no count or page
//     boundary tells that a hidden zone exists;
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

// defaultPerPage is the API's page size when per_page is not given.
const defaultPerPage = 25

// listAllowedZones is list_zones under the allowlist: each allowed zone
// (at most one provider request per allowlist entry) that matches the
// caller's filters, sorted and paged here, so that the counts describe
// only what the caller may see.
func (s *Server) listAllowedZones(ctx context.Context, opts ListZonesOptions, call *kernel.Call) (ZoneList, error) {
	names := slices.Sorted(maps.Keys(s.allow))
	if opts.Name != "" {
		names = nil
		if s.allowed(opts.Name) {
			names = []string{normalizeZone(opts.Name)}
		}
	}
	zones := []Zone{}
	for _, name := range names {
		list, err := s.p.ListZones(ctx, ListZonesOptions{Name: name, Mode: opts.Mode, LabelSelector: opts.LabelSelector, PerPage: 1})
		if err != nil {
			return ZoneList{}, mapError(err, subject{what: "zones"})
		}
		for _, z := range list.Zones {
			if normalizeZone(z.Name) == name && permitsZone(call, z) {
				s.remember(z)
				zones = append(zones, z)
			}
		}
	}
	if zones == nil {
		zones = []Zone{}
	}
	sortZones(zones, opts.Sort)
	page, pg := cutPage(zones, opts.Page, opts.PerPage) // zones is ours: no copy
	return ZoneList{Zones: page, Pagination: pg}, nil
}

// maxPermittedScan bounds the zones read to filter a listing by policy.
const maxPermittedScan = 10_000

// listPermittedZones lists under an authorization policy: every zone the
// filter matches is read, those the policy does not permit are dropped,
// and the page is cut from what remains, so counts and paging describe
// only zones the caller may see (a hidden zone is never counted).
func (s *Server) listPermittedZones(ctx context.Context, opts ListZonesOptions, call *kernel.Call) (ZoneList, error) {
	var zones []Zone
	for page, read := 1, 0; ; page++ {
		list, err := s.p.ListZones(ctx, ListZonesOptions{Name: opts.Name, Mode: opts.Mode, LabelSelector: opts.LabelSelector,
			Page: page, PerPage: maxPerPageZones})
		if err != nil {
			return ZoneList{}, mapError(err, subject{what: "zones"})
		}
		n := len(list.Zones)
		permitted := slices.DeleteFunc(list.Zones, func(z Zone) bool { return !permitsZone(call, z) })
		if zones == nil { // the first page's slice is ours: filtered in place
			zones = permitted
		} else {
			zones = append(zones, permitted...)
		}
		list.Zones = list.Zones[:n]
		read += len(list.Zones)
		if list.Pagination.NextPage == nil || len(list.Zones) == 0 {
			break
		}
		if read >= maxPermittedScan {
			return ZoneList{}, kernel.Errorf(kernel.ResourceExhausted, "More than %d zones to filter by the authorization policy.", maxPermittedScan).
				WithHint("Narrow the listing with name, mode or label_selector.")
		}
	}
	if zones == nil {
		zones = []Zone{}
	}
	sortZones(zones, opts.Sort)
	page, pg := cutPage(zones, opts.Page, opts.PerPage) // zones is ours: no copy
	return ZoneList{Zones: page, Pagination: pg}, nil
}

// sortZones orders zones by the list's sort keys (validated before), then
// by id, as the API does.
func sortZones(zones []Zone, keys []string) {
	keys = append(slices.Clip(keys), "id") // once, not per comparison
	slices.SortStableFunc(zones, func(a, b Zone) int {
		for _, k := range keys {
			field, dir, _ := strings.Cut(k, ":")
			c := 0
			switch field {
			case "name":
				c = strings.Compare(a.Name, b.Name)
			case "created":
				c = a.Created.Compare(b.Created)
			default:
				c = cmp.Compare(a.ID, b.ID)
			}
			if dir == "desc" {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// PageOf cuts one page (from 1; 0 is the first) of perPage items (0: the
// API's default of 25) out of items, and describes it as the API's
// meta.pagination. A provider that pages itself uses it, so that its
// pages count as the API's do. The page is a copy.
func PageOf[T any](items []T, page, perPage int) ([]T, Pagination) {
	p, pg := cutPage(items, page, perPage)
	return slices.Clone(p), pg
}

// cutPage is PageOf without the copy: the page shares items.
func cutPage[T any](items []T, page, perPage int) ([]T, Pagination) {
	page, perPage = cmp.Or(page, 1), cmp.Or(perPage, defaultPerPage)
	total := len(items)
	last := max(1, (total+perPage-1)/perPage)
	pg := Pagination{Page: page, PerPage: perPage, LastPage: &last, TotalEntries: &total}
	if page > 1 {
		prev := min(page-1, last)
		pg.PreviousPage = &prev
	}
	if page < last {
		next := page + 1
		pg.NextPage = &next
	}
	lo := min((page-1)*perPage, total)
	return items[lo:min(lo+perPage, total)], pg
}
