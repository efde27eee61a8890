package localzone

import (
	"context"
	"slices"
	"strconv"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// ListRRSets lists a primary zone's RRSets, filtered by exact name, types
// and label selector, sorted by id (default) or name. The RRSets of a cached
// zone version are sorted once per order (zoneData.ordered); a call then
// costs its page, plus one pass over the sorted RRSets when it filters
// (to count the matches). No lock is held past finding the zone.
func (p *Provider) ListRRSets(ctx context.Context, zone string, opts dns.ListRRSetsOptions) (dns.RRSetList, error) {
	sel, err := parseSelector(opts.LabelSelector)
	if err != nil {
		return dns.RRSetList{}, errInvalid("label_selector", "%v", err)
	}
	keys, derr := parseSort(opts.Sort, "id", "name")
	if derr != nil {
		return dns.RRSetList{}, derr
	}
	for _, t := range opts.Types {
		if derr := validateType(t); derr != nil {
			return dns.RRSetList{}, derr
		}
	}
	if derr := checkPage(opts.Page, opts.PerPage); derr != nil {
		return dns.RRSetList{}, derr
	}
	e, err := p.entry(ctx, zone)
	if err != nil {
		return dns.RRSetList{}, err
	}
	data, err := primaryData(e, "listing rrsets")
	if err != nil {
		return dns.RRSetList{}, err
	}
	sets := data.ordered(orderOf(keys))
	match := func(s *rrset) bool {
		return (opts.Name == "" || s.name == opts.Name) &&
			(len(opts.Types) == 0 || slices.Contains(opts.Types, s.typ)) &&
			(len(sel) == 0 || sel.matches(rrsetLabels(e, s)))
	}
	if opts.Name != "" || len(opts.Types) > 0 || len(sel) > 0 {
		sets = filterSets(sets, match)
	}
	lo, hi, pg, derr := pageBounds(len(sets), opts.Page, opts.PerPage, maxPerPageSets)
	if derr != nil {
		return dns.RRSetList{}, derr
	}
	out := make([]dns.RRSet, 0, hi-lo)
	for _, s := range sets[lo:hi] {
		out = append(out, rrsetView(e, s))
	}
	return dns.RRSetList{RRSets: out, Pagination: pg}, nil
}

// filterSets returns the RRSets that match, in their order.
func filterSets(sets []*rrset, match func(*rrset) bool) []*rrset {
	var out []*rrset
	for _, s := range sets {
		if match(s) {
			out = append(out, s)
		}
	}
	return out
}

// rrsetLabels returns the labels of s (nil when none). They are the
// sidecar's own map: read them, never change them.
func rrsetLabels(e *zoneEntry, s *rrset) map[string]string {
	if rm := e.meta.RRSets[s.key()]; rm != nil {
		return rm.Labels
	}
	return nil
}

// GetRRSet returns one RRSet.
func (p *Provider) GetRRSet(ctx context.Context, zone, name, typ string) (dns.RRSet, error) {
	var out dns.RRSet
	err := p.view(ctx, zone, func(e *zoneEntry) error {
		data, err := primaryData(e, "getting an rrset")
		if err != nil {
			return err
		}
		s := data.sets[name+"/"+typ]
		if s == nil {
			return errNotFound("rrset %s/%s not found in zone %s", name, typ, e.name)
		}
		out = rrsetView(e, s)
		return nil
	})
	return out, err
}

// rrsetOp is a change to one existing (or, for create/add, possibly new)
// RRSet of a primary zone.
type rrsetOp struct {
	name, typ string
	// mayCreate lets the op run on a missing RRSet (s is then a new, empty
	// one); otherwise a missing RRSet is 404.
	mayCreate bool
	// ignoreProtection lets the op run on a change-protected RRSet.
	ignoreProtection bool
	// apply changes s; it reports whether the records or TTL changed.
	apply func(e *zoneEntry, s *rrset, existed bool) (bool, error)
}

// rrsetMutation runs op under mutate: zone mode, existence, protection,
// the change, then the zone rules on the result (an emptied RRSet is
// deleted).
func (p *Provider) rrsetMutation(ctx context.Context, zone, command string, op rrsetOp) (*dns.Action, error) {
	return p.mutate(ctx, zone, command, func(e *zoneEntry) (bool, error) {
		data, err := primaryData(e, command)
		if err != nil {
			return false, err
		}
		key := op.name + "/" + op.typ
		s, existed := data.sets[key], data.sets[key] != nil
		switch {
		case !existed && !op.mayCreate:
			return false, errNotFound("rrset %s not found in zone %s", key, e.name)
		case !existed:
			s = &rrset{name: op.name, typ: op.typ}
			data.sets[key] = s
		case !op.ignoreProtection && e.meta.RRSets[key] != nil && e.meta.RRSets[key].Protected:
			return false, errProtected("rrset %s is change-protected", key)
		}
		changed, err := op.apply(e, s, existed)
		if err != nil {
			return false, err
		}
		if len(s.records) == 0 {
			delete(data.sets, key)
		}
		if changed {
			if derr := checkZoneRules(data, e.meta.Nameservers, "records"); derr != nil {
				return false, derr
			}
		}
		return changed, nil
	})
}

// parseIn validates records of type typ for zone e, making the names in
// their values absolute.
func (p *Provider) parseIn(e *zoneEntry, typ string, records []dns.Record) ([]record, error) {
	rs, derr := parseRecords(e.name+".", typ, records)
	if derr != nil {
		return nil, derr
	}
	return rs, nil
}

// CreateRRSet creates an RRSet; one that exists is 409 uniqueness_error.
func (p *Provider) CreateRRSet(ctx context.Context, zone string, req dns.CreateRRSetRequest) (dns.RRSet, *dns.Action, error) {
	if err := validateType(req.Type); err != nil {
		return dns.RRSet{}, nil, err
	}
	if err := validateTTLPtr("ttl", req.TTL); err != nil {
		return dns.RRSet{}, nil, err
	}
	if err := validateLabels("labels", req.Labels); err != nil {
		return dns.RRSet{}, nil, err
	}
	var out dns.RRSet
	a, err := p.rrsetMutation(ctx, zone, "create_rrset", rrsetOp{
		name: req.Name, typ: req.Type, mayCreate: true, ignoreProtection: true,
		apply: func(e *zoneEntry, s *rrset, existed bool) (bool, error) {
			if derr := validateRRSetName(req.Name, e.name); derr != nil {
				return false, derr
			}
			if existed {
				return false, errUnique("name", "rrset %s already exists; use add_records or set_records", s.key())
			}
			rs, err := p.parseIn(e, req.Type, req.Records)
			if err != nil {
				return false, err
			}
			s.records, s.ttl = rs, clonePtr(req.TTL)
			if len(req.Labels) > 0 {
				e.meta.rrsetMeta(s.key(), true).Labels = cloneLabels(req.Labels)
			} else {
				delete(e.meta.RRSets, s.key())
			}
			out = rrsetView(e, s)
			return true, nil
		},
	})
	if err != nil {
		return dns.RRSet{}, nil, err
	}
	return out, a, nil
}

// UpdateRRSet replaces an RRSet's labels (change protection does not cover
// labels). It records no action.
func (p *Provider) UpdateRRSet(ctx context.Context, zone, name, typ string, labels map[string]string) (dns.RRSet, error) {
	if err := validateLabels("labels", labels); err != nil {
		return dns.RRSet{}, err
	}
	var out dns.RRSet
	_, err := p.rrsetMutation(ctx, zone, "", rrsetOp{
		name: name, typ: typ, ignoreProtection: true,
		apply: func(e *zoneEntry, s *rrset, _ bool) (bool, error) {
			e.meta.rrsetMeta(s.key(), true).Labels = cloneLabels(labels)
			out = rrsetView(e, s)
			return false, nil
		},
	})
	return out, err
}

// DeleteRRSet deletes an RRSet. The SOA and the assigned NS records cannot
// go (422 invalid_input); change protection blocks it (423).
func (p *Provider) DeleteRRSet(ctx context.Context, zone, name, typ string) (*dns.Action, error) {
	return p.rrsetMutation(ctx, zone, "delete_rrset", rrsetOp{
		name: name, typ: typ,
		apply: func(_ *zoneEntry, s *rrset, _ bool) (bool, error) {
			s.records = nil
			return true, nil
		},
	})
}

// SetRecords replaces all records of an existing RRSet.
func (p *Provider) SetRecords(ctx context.Context, zone, name, typ string, records []dns.Record) (*dns.Action, error) {
	return p.rrsetMutation(ctx, zone, "set_rrset_records", rrsetOp{
		name: name, typ: typ,
		apply: func(e *zoneEntry, s *rrset, _ bool) (bool, error) {
			rs, err := p.parseIn(e, typ, records)
			if err != nil {
				return false, err
			}
			s.records = rs
			return true, nil
		},
	})
}

// AddRecords appends records, creating the RRSet when it is missing. A
// value the RRSet already holds is left as it is (so a retried call is
// harmless). A non-nil ttl sets the RRSet's TTL, also when it existed.
func (p *Provider) AddRecords(ctx context.Context, zone, name, typ string, records []dns.Record, ttl *int) (*dns.Action, error) {
	if err := validateTTLPtr("ttl", ttl); err != nil {
		return nil, err
	}
	return p.rrsetMutation(ctx, zone, "add_rrset_records", rrsetOp{
		name: name, typ: typ, mayCreate: true,
		apply: func(e *zoneEntry, s *rrset, existed bool) (bool, error) {
			if derr := validateRRSetName(name, e.name); derr != nil {
				return false, derr
			}
			if derr := validateType(typ); derr != nil {
				return false, derr
			}
			rs, err := p.parseIn(e, typ, records)
			if err != nil {
				return false, err
			}
			for _, r := range rs {
				if !slices.ContainsFunc(s.records, func(o record) bool { return o.value == r.value }) {
					s.records = append(s.records, r)
				}
			}
			if ttl != nil {
				s.ttl = clonePtr(ttl)
			}
			if !existed {
				delete(e.meta.RRSets, s.key())
			}
			return true, nil
		},
	})
}

// RemoveRecords removes records by value; removing every value deletes
// the RRSet. A value the RRSet does not hold is 422 invalid_input.
func (p *Provider) RemoveRecords(ctx context.Context, zone, name, typ string, records []dns.Record) (*dns.Action, error) {
	return p.rrsetMutation(ctx, zone, "remove_rrset_records", rrsetOp{
		name: name, typ: typ,
		apply: func(e *zoneEntry, s *rrset, _ bool) (bool, error) {
			rs, err := p.parseIn(e, typ, records)
			if err != nil {
				return false, err
			}
			err = s.eachHeld(rs, func(j int, _ record) { s.records = slices.Delete(s.records, j, j+1) })
			return err == nil, err
		},
	})
}

// UpdateRecords changes the comments of existing records; each value must
// be in the RRSet.
func (p *Provider) UpdateRecords(ctx context.Context, zone, name, typ string, records []dns.Record) (*dns.Action, error) {
	return p.rrsetMutation(ctx, zone, "update_rrset_records", rrsetOp{
		name: name, typ: typ,
		apply: func(e *zoneEntry, s *rrset, _ bool) (bool, error) {
			rs, err := p.parseIn(e, typ, records)
			if err != nil {
				return false, err
			}
			err = s.eachHeld(rs, func(j int, r record) { s.records[j].comment = r.comment })
			return err == nil, err
		},
	})
}

// ChangeRRSetTTL sets an RRSet's TTL; nil returns it to the zone default.
func (p *Provider) ChangeRRSetTTL(ctx context.Context, zone, name, typ string, ttl *int) (*dns.Action, error) {
	if err := validateTTLPtr("ttl", ttl); err != nil {
		return nil, err
	}
	return p.rrsetMutation(ctx, zone, "change_rrset_ttl", rrsetOp{
		name: name, typ: typ,
		apply: func(_ *zoneEntry, s *rrset, _ bool) (bool, error) {
			s.ttl = clonePtr(ttl)
			return true, nil
		},
	})
}

// ChangeRRSetProtection sets an RRSet's change protection; it is always
// allowed, protected or not.
func (p *Provider) ChangeRRSetProtection(ctx context.Context, zone, name, typ string, change bool) (*dns.Action, error) {
	return p.rrsetMutation(ctx, zone, "change_rrset_protection", rrsetOp{
		name: name, typ: typ, ignoreProtection: true,
		apply: func(e *zoneEntry, s *rrset, _ bool) (bool, error) {
			e.meta.rrsetMeta(s.key(), true).Protected = change
			return false, nil
		},
	})
}

func clonePtr(p *int) *int {
	if p == nil {
		return nil
	}
	return ptr(*p)
}

func fieldIndex(field string, i int, sub string) string {
	return field + "[" + strconv.Itoa(i) + "]." + sub
}

// eachHeld finds each of rs among the RRSet's records by value and calls
// f with its index; a value the RRSet does not hold is 422 invalid_input.
func (s *rrset) eachHeld(rs []record, f func(j int, r record)) error {
	for i, r := range rs {
		j := slices.IndexFunc(s.records, func(o record) bool { return o.value == r.value })
		if j < 0 {
			return errInvalid(fieldIndex("records", i, "value"), "rrset %s has no value %q", s.key(), r.value)
		}
		f(j, r)
	}
	return nil
}
