package rfc2136

import (
	"cmp"
	"context"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// Page sizes: the API's defaults and maxima (reference §2.3).
const (
	maxPerPageZones = 50
	maxPerPageSets  = 100
)

// ListZones lists the configured zones matching the filters, each read
// from the server. The protocol has no labels: a label selector is
// invalid_input. Every zone is a primary zone.
func (p *Provider) ListZones(ctx context.Context, opts dns.ListZonesOptions) (dns.ZoneList, error) {
	if opts.LabelSelector != "" {
		return dns.ZoneList{}, noLabels()
	}
	var zcs []*zoneConf
	for _, zc := range p.zones {
		if (opts.Name == "" || zc.name == strings.TrimSuffix(strings.ToLower(opts.Name), ".")) &&
			(opts.Mode == "" || opts.Mode == dns.ModePrimary) {
			zcs = append(zcs, zc)
		}
	}
	sortZones(zcs, opts.Sort)
	page, pg := pageOf(zcs, opts.Page, opts.PerPage, maxPerPageZones)
	zones := make([]dns.Zone, 0, len(page))
	for _, zc := range page {
		_, st, err := p.read(ctx, zc.name)
		if err != nil {
			return dns.ZoneList{}, err
		}
		zones = append(zones, p.zoneView(st))
	}
	return dns.ZoneList{Pagination: pg, Zones: zones}, nil
}

// sortZones orders zones by the sort keys, then by id.
func sortZones(zcs []*zoneConf, keys []string) {
	slices.SortStableFunc(zcs, func(a, b *zoneConf) int {
		for _, k := range append(slices.Clone(keys), "id") {
			field, dir, _ := strings.Cut(k, ":")
			c := cmp.Compare(a.id, b.id)
			if field == "name" {
				c = strings.Compare(a.name, b.name)
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

// GetZone reads one zone.
func (p *Provider) GetZone(ctx context.Context, zone string) (dns.Zone, error) {
	_, st, err := p.read(ctx, zone)
	if err != nil {
		return dns.Zone{}, err
	}
	return p.zoneView(st), nil
}

// zoneView is the model's Zone of a zone as read.
func (p *Provider) zoneView(st *zoneState) dns.Zone {
	ns := []string{}
	for _, rr := range st.sets[setKey{name: "@", typ: mdns.TypeNS}].records() {
		ns = append(ns, rr.(*mdns.NS).Ns)
	}
	return dns.Zone{
		ID: st.zone.id, Name: st.zone.name, Mode: dns.ModePrimary, TTL: p.opts.DefaultTTL,
		Labels: map[string]string{}, Status: "ok", RecordCount: st.records,
		AuthoritativeNameservers: &dns.AuthoritativeNameservers{Assigned: ns, Delegated: []string{}, DelegationStatus: "unknown"},
	}
}

// records is the RRSet's records; none for a nil RRSet.
func (s *rrset) records() []mdns.RR {
	if s == nil {
		return nil
	}
	return s.rrs
}

// ExportZonefile writes the zone as read, every record of every type, as
// an RFC 1035 master file.
func (p *Provider) ExportZonefile(ctx context.Context, zone string) (string, error) {
	_, st, err := p.read(ctx, zone)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("; zone " + st.zone.name + ", read from the authoritative server by zone transfer.\n")
	b.WriteString("$ORIGIN " + st.zone.origin + "\n")
	for _, k := range st.sortedKeys() {
		for _, rr := range st.sets[k].rrs {
			b.WriteString(rr.String())
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

// ListRRSets lists the zone's RRSets of the model's types, sorted and
// paged as the API does.
func (p *Provider) ListRRSets(ctx context.Context, zone string, opts dns.ListRRSetsOptions) (dns.RRSetList, error) {
	if opts.LabelSelector != "" {
		return dns.RRSetList{}, noLabels()
	}
	_, st, err := p.read(ctx, zone)
	if err != nil {
		return dns.RRSetList{}, err
	}
	var keys []setKey
	for _, k := range st.sortedKeys() {
		t := mdns.TypeToString[k.typ]
		if inModel(k.typ) && (opts.Name == "" || opts.Name == k.name) && (len(opts.Types) == 0 || slices.Contains(opts.Types, t)) {
			keys = append(keys, k)
		}
	}
	sortSets(keys, opts.Sort)
	page, pg := pageOf(keys, opts.Page, opts.PerPage, maxPerPageSets)
	out := make([]dns.RRSet, len(page))
	for i, k := range page {
		out[i] = st.view(k)
	}
	return dns.RRSetList{Pagination: pg, RRSets: out}, nil
}

// sortSets orders RRSets by the sort keys (id and name: "name/TYPE"),
// keeping the zone-file order when none is given.
func sortSets(keys []setKey, sorts []string) {
	if len(sorts) == 0 {
		return
	}
	field, dir, _ := strings.Cut(sorts[0], ":")
	slices.SortStableFunc(keys, func(a, b setKey) int {
		c := strings.Compare(a.name, b.name)
		if c == 0 && field == "id" {
			c = strings.Compare(mdns.TypeToString[a.typ], mdns.TypeToString[b.typ])
		}
		if dir == "desc" {
			c = -c
		}
		return c
	})
}

// GetRRSet reads one RRSet.
func (p *Provider) GetRRSet(ctx context.Context, zone, name, typ string) (dns.RRSet, error) {
	_, st, err := p.read(ctx, zone)
	if err != nil {
		return dns.RRSet{}, err
	}
	t, ok := typeOf(typ)
	if !ok {
		return dns.RRSet{}, invalidInput("type", "not a record type the tools manage")
	}
	k := setKey{name: strings.ToLower(name), typ: t}
	if st.sets[k] == nil {
		return dns.RRSet{}, &dns.Error{Status: 404, Code: "not_found", Message: "rrset not found"}
	}
	return st.view(k), nil
}

// view is the model's RRSet of one RRSet.
func (st *zoneState) view(k setKey) dns.RRSet {
	s := st.sets[k]
	ttl := int(s.ttl)
	out := dns.RRSet{ID: k.name + "/" + mdns.TypeToString[k.typ], Name: k.name, Type: mdns.TypeToString[k.typ],
		TTL: &ttl, Labels: map[string]string{}, Records: make([]dns.Record, len(s.rrs)), Zone: st.zone.id}
	for i, rr := range s.rrs {
		out.Records[i] = dns.Record{Value: zonefile.RdataText(rr)}
	}
	return out
}

// pageOf is dns.PageOf with per_page above max clamped, as the API does.
func pageOf[T any](items []T, page, perPage, max int) ([]T, dns.Pagination) {
	if perPage > max {
		perPage = max
	}
	return dns.PageOf(items, page, perPage)
}

// noLabels refuses a label selector: the protocol keeps no labels.
func noLabels() error {
	return invalidInput("label_selector", "an RFC 2136 server keeps no labels")
}

// invalidInput is the API's invalid_input for one field.
func invalidInput(field, msg string) error {
	return &dns.Error{Status: 422, Code: "invalid_input", Message: field + ": " + msg,
		Fields: []dns.FieldError{{Name: field, Messages: []string{msg}}}}
}
