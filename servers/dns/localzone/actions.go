package localzone

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// Action commands. The API leaves them undocumented; these name the
// operation the way the API's operation ids do.
//
// Every local action completes before the call returns: status success,
// progress 100, started and finished set. Actions are numbered per data
// directory and kept in the zone's sidecar (the newest HistoryLimit of
// them); a deleted zone's history and delete action move to the
// directory's state file (the newest HistoryLimit actions of deleted zones).

// ListActions lists actions, of one zone when opts.Zone is set, filtered by
// status and sorted by id (default), command, status, started or finished.
func (p *Provider) ListActions(ctx context.Context, opts dns.ListActionsOptions) (dns.ActionList, error) {
	keys, derr := parseSort(opts.Sort, "id", "command", "status", "started", "finished")
	if derr != nil {
		return dns.ActionList{}, derr
	}
	for _, s := range opts.Status {
		if s != dns.ActionRunning && s != dns.ActionSuccess && s != dns.ActionError {
			return dns.ActionList{}, errInvalid("status", "must be running, success or error")
		}
	}
	var all []dns.Action
	err := p.store.read(ctx, func(tx *readTx) error {
		var err error
		all, err = p.collectActions(tx, opts.Zone)
		return err
	})
	if err != nil {
		return dns.ActionList{}, err
	}
	if len(opts.Status) > 0 {
		all = slices.DeleteFunc(all, func(a dns.Action) bool { return !slices.Contains(opts.Status, a.Status) })
	}
	sortBy(all, keys, "id", compareActions)
	page, pg, derr := paginate(all, opts.Page, opts.PerPage, maxPerPageZones)
	if derr != nil {
		return dns.ActionList{}, derr
	}
	return dns.ActionList{Actions: page, Pagination: pg}, nil
}

// collectActions gathers copies of the actions of one zone, or of every
// zone and the deleted ones. The caller holds a lock.
func (p *Provider) collectActions(tx *readTx, zone string) ([]dns.Action, error) {
	if zone != "" {
		e, err := p.store.find(tx, zone)
		if err != nil {
			return nil, err
		}
		return cloneActions(nil, e.meta.Actions), nil
	}
	var all []dns.Action
	err := p.store.eachMeta(tx, func(_ string, m *sidecar, _ bool) (bool, error) {
		all = cloneActions(all, m.Actions)
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	st, err := readState(p.store.dir)
	if err != nil {
		return nil, err
	}
	return append(all, st.Deleted...), nil
}

func compareActions(field string, a, b dns.Action) int {
	switch field {
	case "command":
		return strings.Compare(a.Command, b.Command)
	case "status":
		return strings.Compare(a.Status, b.Status)
	case "started":
		return a.Started.Compare(b.Started)
	case "finished":
		switch {
		case a.Finished == nil || b.Finished == nil:
			return cmp.Compare(boolInt(a.Finished != nil), boolInt(b.Finished != nil))
		}
		return a.Finished.Compare(*b.Finished)
	}
	return cmp.Compare(a.ID, b.ID)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// GetAction finds an action of any zone, or of a deleted zone.
func (p *Provider) GetAction(ctx context.Context, id int64) (dns.Action, error) {
	var out dns.Action
	err := p.store.read(ctx, func(tx *readTx) error {
		all, err := p.collectActions(tx, "")
		if err != nil {
			return err
		}
		for _, a := range all {
			if a.ID == id {
				out = a
				return nil
			}
		}
		return errNotFound("action %d not found", id)
	})
	return out, err
}

// cloneActions appends deep copies of actions to dst: the sidecars they
// come from are cached and shared, so no caller may hold their pointers.
func cloneActions(dst, actions []dns.Action) []dns.Action {
	for _, a := range actions {
		a.Resources = slices.Clone(a.Resources)
		if a.Finished != nil {
			a.Finished = ptr(*a.Finished)
		}
		if a.Error != nil {
			a.Error = ptr(*a.Error)
		}
		dst = append(dst, a)
	}
	return dst
}
