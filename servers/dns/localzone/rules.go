package localzone

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// checkZoneRules enforces what every zone the provider writes must satisfy,
// whatever the mutation: one SOA, at the apex; the assigned nameservers in
// the apex NS RRSet; a CNAME alone at its name, with one value, not at the
// apex; no empty RRSet. field names the request field to blame.
func checkZoneRules(z *zoneData, assigned []string, field string) *dns.Error {
	if soa := z.sets["@/SOA"]; soa == nil || len(soa.records) != 1 {
		return errInvalid(field, "the zone needs exactly one SOA record at @")
	}
	if missing := missingNS(z, assigned); missing != "" {
		return errInvalid(field, "the NS records at @ must include the assigned nameserver %s", missing)
	}
	typesAt := map[string][]string{}
	for _, s := range z.sets {
		if len(s.records) == 0 {
			return errInvalid(field, "rrset %s has no records", s.key())
		}
		if s.typ == "SOA" && s.name != "@" {
			return errInvalid(field, "an SOA record belongs at @, not %s", s.name)
		}
		typesAt[s.name] = append(typesAt[s.name], s.typ)
	}
	for name, types := range typesAt {
		if !slices.Contains(types, "CNAME") {
			continue
		}
		switch {
		case name == "@":
			return errInvalid(field, "a CNAME cannot be at the zone apex")
		case len(types) > 1:
			return errInvalid(field, "a CNAME at %s cannot coexist with other records there", name)
		case len(z.sets[name+"/CNAME"].records) > 1:
			return errInvalid(field, "the CNAME at %s has more than one value", name)
		}
	}
	return nil
}

// missingNS returns the first assigned nameserver the apex NS RRSet lacks.
func missingNS(z *zoneData, assigned []string) string {
	ns := z.sets["@/NS"]
	for _, want := range assigned {
		found := ns != nil && slices.ContainsFunc(ns.records, func(r record) bool {
			return strings.EqualFold(r.value, want)
		})
		if !found {
			return want
		}
	}
	return ""
}

// checkImported applies the import rules a parsed zone file must meet on
// top of the syntax: API types, TTLs and names.
func checkImported(z *zoneData) *dns.Error {
	for _, s := range z.sortedSets() {
		if err := validateType(s.typ); err != nil {
			return errInvalid("zonefile", "rrset %s: type %s is not supported", s.key(), s.typ)
		}
		if err := validateRRSetName(s.name, z.name); err != nil {
			return errInvalid("zonefile", "rrset %s: bad name", s.key())
		}
		if s.ttl != nil && (*s.ttl < minTTL || *s.ttl > maxTTL) {
			return errInvalid("zonefile", "rrset %s: ttl %d is outside %d..%d", s.key(), *s.ttl, minTTL, maxTTL)
		}
	}
	return nil
}

// parseImport parses an imported zone file for zone (whose current default
// TTL is ttl): syntax, $ORIGIN and class rules, then checkImported. When
// creating the zone, the SOA may be missing. The text comes from a caller:
// the parse takes one of the zonefile package's parse slots, holds no store
// lock, and ends with ctx.
func parseImport(ctx context.Context, text, zone string, ttl int, creating bool) (*zoneData, error) {
	release, err := zonefile.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	z, err := parseZonefile(ctx, text, zone, parseOptions{strictOrigin: true, defaultTTL: ttl, optionalSOA: creating})
	if err != nil {
		if isSyntax(err) {
			return nil, errInvalid("zonefile", "%v", err)
		}
		return nil, err
	}
	if err := checkImported(z); err != nil {
		return nil, err
	}
	return z, nil
}

// newZoneData is a fresh primary zone: an SOA and the assigned NS records.
func (p *Provider) newZoneData(name string, ttl int) *zoneData {
	z := &zoneData{name: name, ttl: ttl, sets: map[string]*rrset{}}
	p.ensureApex(z)
	return z
}

// ensureApex adds a default SOA and the assigned NS records where missing.
func (p *Provider) ensureApex(z *zoneData) {
	if z.sets["@/SOA"] == nil {
		host := p.opts.Hostmaster
		if host == "" {
			host = "hostmaster." + z.origin()
		}
		v := fmt.Sprintf("%s %s 0 86400 10800 3600000 3600", p.opts.Nameservers[0], host)
		z.sets["@/SOA"] = &rrset{name: "@", typ: "SOA", records: []record{{value: v}}}
	}
	ns := z.sets["@/NS"]
	if ns == nil {
		ns = &rrset{name: "@", typ: "NS"}
		z.sets["@/NS"] = ns
	}
	for missingNS(z, p.opts.Nameservers) != "" {
		ns.records = append(ns.records, record{value: missingNS(z, p.opts.Nameservers)})
	}
}
