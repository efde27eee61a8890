package localzone

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// ListZones lists zones, filtered by exact name, mode and label selector.
// A zone whose file no longer parses is listed with status "error".
func (p *Provider) ListZones(ctx context.Context, opts dns.ListZonesOptions) (dns.ZoneList, error) {
	sel, err := parseSelector(opts.LabelSelector)
	if err != nil {
		return dns.ZoneList{}, errInvalid("label_selector", "%v", err)
	}
	keys, derr := parseSort(opts.Sort, "id", "name", "created")
	if derr != nil {
		return dns.ZoneList{}, derr
	}
	if opts.Mode != "" && opts.Mode != dns.ModePrimary && opts.Mode != dns.ModeSecondary {
		return dns.ZoneList{}, errInvalid("mode", "must be primary or secondary")
	}
	var zones []dns.Zone
	err = p.store.read(ctx, func(tx *readTx) error {
		entries, err := p.store.list(tx)
		if err != nil {
			return err
		}
		zones = zones[:0]
		for _, e := range entries {
			z := p.zoneView(e)
			if (opts.Name == "" || z.Name == canonicalZoneName(opts.Name)) &&
				(opts.Mode == "" || z.Mode == opts.Mode) && sel.matches(z.Labels) {
				zones = append(zones, z)
			}
		}
		return nil
	})
	if err != nil {
		return dns.ZoneList{}, err
	}
	sortBy(zones, keys, "id", compareZones)
	page, pg, derr := paginate(zones, opts.Page, opts.PerPage, maxPerPageZones)
	if derr != nil {
		return dns.ZoneList{}, derr
	}
	for i := range page {
		page[i].DNSSEC = p.dnssecView(ctx, page[i])
	}
	return dns.ZoneList{Zones: page, Pagination: pg}, nil
}

func compareZones(field string, a, b dns.Zone) int {
	switch field {
	case "name":
		return strings.Compare(a.Name, b.Name)
	case "created":
		return a.Created.Compare(b.Created)
	}
	return cmp.Compare(a.ID, b.ID)
}

// GetZone returns one zone. A zone file that no longer parses is an
// invalid_zonefile error naming the line.
func (p *Provider) GetZone(ctx context.Context, zone string) (dns.Zone, error) {
	var z dns.Zone
	err := p.view(ctx, zone, func(e *zoneEntry) error {
		if e.err != nil {
			return errZonefile(e.name, e.err)
		}
		z = p.zoneView(e)
		return nil
	})
	if err == nil {
		z.DNSSEC = p.dnssecView(ctx, z)
	}
	return z, err
}

// CreateZone creates a zone. A primary zone gets an SOA and the assigned
// NS records (also when a zone file is given and lacks them). A secondary
// zone stores its primary servers and serves nothing: this provider does
// not transfer zones (no AXFR), so its records stay unknown.
func (p *Provider) CreateZone(ctx context.Context, req dns.CreateZoneRequest) (dns.Zone, *dns.Action, error) {
	e, err := p.newEntry(ctx, req)
	if err != nil {
		return dns.Zone{}, nil, err
	}
	var a dns.Action
	err = p.store.write(ctx, func() error {
		if err := p.store.adoptAll(ctx); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(p.store.dir, zoneFile(e.name))); err == nil {
			return errUnique("name", "zone %s already exists", e.name)
		}
		if old, err := p.store.readMeta(nil, e.name, true); err != nil {
			return err
		} else if old != nil && old.Mode == dns.ModeSecondary {
			return errUnique("name", "zone %s already exists", e.name)
		}
		st, err := readState(p.store.dir)
		if err != nil {
			return err
		}
		e.meta.ID = st.NextZoneID
		st.NextZoneID++
		a = p.store.newAction(st, "create_zone", e.meta.ID)
		e.meta.record(a, p.opts.HistoryLimit)
		return p.store.create(st, e)
	})
	if err != nil {
		return dns.Zone{}, nil, err
	}
	return p.zoneView(e), &a, nil
}

// newEntry validates a creation request and builds the zone it asks for.
func (p *Provider) newEntry(ctx context.Context, req dns.CreateZoneRequest) (*zoneEntry, error) {
	name := canonicalZoneName(req.Name)
	if err := validateZoneName(name); err != nil {
		return nil, errInvalid("name", "%v", err)
	}
	mode := cmp.Or(req.Mode, dns.ModePrimary)
	ttl := defaultTTL
	if req.TTL != nil {
		ttl = *req.TTL
	}
	if err := validateTTL("ttl", ttl); err != nil {
		return nil, err
	}
	if err := validateLabels("labels", req.Labels); err != nil {
		return nil, err
	}
	meta := &sidecar{
		Version: 1, Name: name, Created: p.opts.Now().UTC(), Mode: mode,
		Labels: cloneLabels(req.Labels), Actions: []dns.Action{},
	}
	e := &zoneEntry{name: name, meta: meta}
	switch mode {
	case dns.ModeSecondary:
		if req.Zonefile != "" {
			return nil, errInvalid("zonefile", "a secondary zone takes its records from its primaries")
		}
		prim, err := validatePrimaries(req.PrimaryNameservers)
		if err != nil {
			return nil, err
		}
		meta.PrimaryNameservers, meta.TTL = prim, ttl
		return e, nil
	case dns.ModePrimary:
		if len(req.PrimaryNameservers) > 0 {
			return nil, errInvalid("primary_nameservers", "only secondary zones have primary nameservers")
		}
	default:
		return nil, errInvalid("mode", "must be primary or secondary")
	}
	meta.Nameservers = p.opts.Nameservers
	e.data = p.newZoneData(name, ttl)
	if req.Zonefile == "" {
		return e, nil
	}
	data, err := parseImport(ctx, req.Zonefile, name, ttl, true)
	if err != nil {
		return nil, err
	}
	p.ensureApex(data)
	if err := checkZoneRules(data, meta.Nameservers, "zonefile"); err != nil {
		return nil, err
	}
	e.data = data
	return e, nil
}

// UpdateZone replaces the zone's labels.
func (p *Provider) UpdateZone(ctx context.Context, zone string, labels map[string]string) (dns.Zone, error) {
	if err := validateLabels("labels", labels); err != nil {
		return dns.Zone{}, err
	}
	var out dns.Zone
	_, err := p.mutate(ctx, zone, "", func(e *zoneEntry) (bool, error) {
		e.meta.Labels = cloneLabels(labels)
		out = p.zoneView(e)
		return false, nil
	})
	return out, err
}

// DeleteZone deletes a zone and its files; delete protection blocks it
// (423 protected), and so does a zone file that no longer parses (it is
// left for a human to fix or remove).
func (p *Provider) DeleteZone(ctx context.Context, zone string) (*dns.Action, error) {
	if err := p.warm(ctx, zone); err != nil {
		return nil, err
	}
	var a dns.Action
	err := p.store.write(ctx, func() error {
		e, err := p.loadFresh(ctx, zone)
		if err != nil {
			return err
		}
		if e.meta.Protection.Delete {
			return errProtected("zone %s is protected against deletion", e.name)
		}
		if e.err != nil {
			return errZonefile(e.name, e.err)
		}
		st, err := readState(p.store.dir)
		if err != nil {
			return err
		}
		a = p.store.newAction(st, "delete_zone", e.meta.ID)
		return p.store.remove(st, e, a, p.opts.HistoryLimit)
	})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// ExportZonefile renders the zone as a master file that ImportZonefile
// reads back to the same zone.
func (p *Provider) ExportZonefile(ctx context.Context, zone string) (string, error) {
	e, err := p.entry(ctx, zone)
	if err != nil {
		return "", err
	}
	data, err := primaryData(e, "export")
	if err != nil {
		return "", err
	}
	return string(data.render()), nil
}

// ImportZonefile replaces every RRSet of the zone with the file's (rules in
// the reference §5: $ORIGIN must be the zone, $TTL becomes the default TTL,
// class IN only, an SOA and the assigned NS records required, comments on
// records kept). It fails while any RRSet is change-protected. Labels of
// RRSets that are still there after the import are kept. The file is parsed
// before the write lock is taken (see prepareImport); under the lock the
// preconditions are checked again on the zone as it is then.
func (p *Provider) ImportZonefile(ctx context.Context, zone, zonefile string) (*dns.Action, error) {
	data, err := p.prepareImport(ctx, zone, zonefile)
	if err != nil {
		return nil, err
	}
	return p.mutate(ctx, zone, "import_zonefile", func(e *zoneEntry) (bool, error) {
		old, err := importable(e)
		if err != nil {
			return false, err
		}
		if old.ttl != data.parsedWith {
			return false, errConflict("zone %s changed its default TTL while the zone file was read; import again", e.name)
		}
		if err := checkZoneRules(data, e.meta.Nameservers, "zonefile"); err != nil {
			return false, err
		}
		e.data = data
		return true, nil
	})
}

// CheckImport reports whether ImportZonefile of this file would be refused
// now (a zone that cannot be imported into, a protected RRSet, a file that
// does not parse, is over the budget, or breaks the zone's rules), without
// changing anything. The confirmation gate asks it before issuing a token.
func (p *Provider) CheckImport(ctx context.Context, z dns.Zone, zonefile string) error {
	_, err := p.prepareImport(ctx, strconv.FormatInt(z.ID, 10), zonefile)
	return err
}

// prepareImport checks the zone under the read lock, then parses the file
// with no store lock held (a parse of a hostile file costs at most its
// budget, and other calls go on meanwhile) and checks the zone's rules.
func (p *Provider) prepareImport(ctx context.Context, zone, text string) (*zoneData, error) {
	// A file over the budget is refused before the store is touched.
	if err := zonefile.Precount(text, maxRecords); err != nil {
		return nil, errInvalid("zonefile", "%v", err)
	}
	var ttl int
	var name string
	var assigned []string
	err := p.view(ctx, zone, func(e *zoneEntry) error {
		old, err := importable(e)
		if err != nil {
			return err
		}
		ttl, name, assigned = old.ttl, e.name, slices.Clone(e.meta.Nameservers)
		return nil
	})
	if err != nil {
		return nil, err
	}
	data, err := parseImport(ctx, text, name, ttl, false)
	if err != nil {
		return nil, err
	}
	data.parsedWith = ttl
	if err := checkZoneRules(data, assigned, "zonefile"); err != nil {
		return nil, err
	}
	return data, nil
}

// importable returns the records of a zone an import may replace: a primary
// zone whose file parses and none of whose RRSets is change-protected.
func importable(e *zoneEntry) (*zoneData, error) {
	old, err := primaryData(e, "import")
	if err != nil {
		return nil, err
	}
	for k, rm := range e.meta.RRSets {
		if rm.Protected && old.sets[k] != nil {
			return nil, errProtected("rrset %s is change-protected; an import replaces every rrset", k)
		}
	}
	return old, nil
}

// ChangeZoneTTL sets the default TTL of RRSets without their own.
func (p *Provider) ChangeZoneTTL(ctx context.Context, zone string, ttl int) (*dns.Action, error) {
	if err := validateTTL("ttl", ttl); err != nil {
		return nil, err
	}
	return p.mutate(ctx, zone, "change_zone_ttl", func(e *zoneEntry) (bool, error) {
		data, err := primaryData(e, "change_ttl")
		if err != nil {
			return false, err
		}
		data.ttl = ttl
		return true, nil
	})
}

// ChangeZoneProtection sets the zone's delete protection.
func (p *Provider) ChangeZoneProtection(ctx context.Context, zone string, delete bool) (*dns.Action, error) {
	return p.mutate(ctx, zone, "change_zone_protection", func(e *zoneEntry) (bool, error) {
		e.meta.Protection.Delete = delete
		return false, nil
	})
}

// ChangePrimaryNameservers replaces a secondary zone's primary servers.
func (p *Provider) ChangePrimaryNameservers(ctx context.Context, zone string, servers []dns.PrimaryNameserver) (*dns.Action, error) {
	prim, derr := validatePrimaries(servers)
	if derr != nil {
		return nil, derr
	}
	return p.mutate(ctx, zone, "change_primary_nameservers", func(e *zoneEntry) (bool, error) {
		if e.meta.Mode != dns.ModeSecondary {
			return false, errZoneMode("zone %s is a primary zone: it has no primary nameservers", e.name)
		}
		e.meta.PrimaryNameservers = prim
		return false, nil
	})
}
