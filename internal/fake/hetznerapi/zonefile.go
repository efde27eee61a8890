package hetznerapi

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// ErrZonefile is wrapped by every zone-file import error.
var ErrZonefile = errors.New("invalid zone file")

// maxZonefileRecords bounds an import.
const maxZonefileRecords = 10000

// ParsedZonefile is the outcome of parsing a zone file by the import rules.
type ParsedZonefile struct {
	// TTL is the $TTL value, nil when absent.
	TTL *int
	// RRSets are keyed by id ("www/A"); TTL is nil when it equals the
	// default TTL (doc.go).
	RRSets map[string]RRSet
}

// ParseZonefile applies the documented import rules (reference §5): an
// optional $ORIGIN equal to zoneName plus a dot, an optional $TTL, class IN
// only, an SOA and the Hetzner NS records present, per-record comments kept.
// zoneTTL is the default when there is no $TTL.
func ParseZonefile(text, zoneName string, zoneTTL int) (*ParsedZonefile, error) {
	origin := dns.Fqdn(zoneName)
	ttl, err := scanDirectives(text, origin)
	if err != nil {
		return nil, err
	}
	def := zoneTTL
	if ttl != nil {
		def = *ttl
	}
	zp := dns.NewZoneParser(strings.NewReader(text), origin, "")
	zp.SetDefaultTTL(uint32(def))
	sets := map[string]*RRSet{}
	n := 0
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if n++; n > maxZonefileRecords {
			return nil, fmt.Errorf("%w: more than %d records", ErrZonefile, maxZonefileRecords)
		}
		if err := addParsed(sets, rr, zp.Comment(), zoneName); err != nil {
			return nil, err
		}
	}
	if err := zp.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrZonefile, err)
	}
	if err := checkRequired(sets); err != nil {
		return nil, err
	}
	out := &ParsedZonefile{TTL: ttl, RRSets: map[string]RRSet{}}
	for id, rs := range sets {
		if rs.TTL != nil && *rs.TTL == def {
			rs.TTL = nil
		}
		out.RRSets[id] = *rs
	}
	return out, nil
}

// scanDirectives checks $ORIGIN and reads $TTL; miekg/dns applies them too.
func scanDirectives(text, origin string) (*int, error) {
	var ttl *int
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "$") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "$ORIGIN":
			if len(f) < 2 || strings.ToLower(f[1]) != origin {
				return nil, fmt.Errorf("%w: $ORIGIN must be %s", ErrZonefile, origin)
			}
		case "$TTL":
			if len(f) < 2 {
				return nil, fmt.Errorf("%w: $TTL without value", ErrZonefile)
			}
			v, err := strconv.Atoi(f[1])
			if err != nil || v < minTTL || v > maxTTL {
				return nil, fmt.Errorf("%w: $TTL must be %d..%d seconds", ErrZonefile, minTTL, maxTTL)
			}
			ttl = &v
		default:
			return nil, fmt.Errorf("%w: directive %s not supported", ErrZonefile, quoteShort(f[0]))
		}
	}
	return ttl, nil
}

// addParsed adds one parsed RR to its RRSet.
func addParsed(sets map[string]*RRSet, rr dns.RR, comment, zoneName string) error {
	h := rr.Header()
	if h.Class != dns.ClassINET {
		return fmt.Errorf("%w: only class IN is supported", ErrZonefile)
	}
	name, err := relativeName(h.Name, zoneName)
	if err != nil {
		return err
	}
	typ := dns.TypeToString[h.Rrtype]
	if e := checkType(typ); e != nil {
		return fmt.Errorf("%w: unsupported type %s", ErrZonefile, quoteShort(typ))
	}
	if e := checkRRSetName(name, zoneName); e != nil {
		return fmt.Errorf("%w: invalid name %s", ErrZonefile, quoteShort(name))
	}
	ttl := int(h.Ttl)
	if ttl < minTTL {
		return fmt.Errorf("%w: TTL of %s below %d", ErrZonefile, name, minTTL)
	}
	value := strings.TrimPrefix(rr.String(), h.String())
	if err := checkValue(value, typ, zoneName); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrZonefile, name, err)
	}
	comment = unmangleComment(comment)
	id := rrsetID(name, typ)
	rs, ok := sets[id]
	if !ok {
		rs = &RRSet{ID: id, Name: name, Type: typ, TTL: &ttl, Labels: map[string]string{}}
		sets[id] = rs
	}
	*rs.TTL = min(*rs.TTL, ttl)
	if !slices.ContainsFunc(rs.Records, func(r Record) bool { return r.Value == value }) {
		rs.Records = append(rs.Records, Record{Value: value, Comment: comment})
	}
	return nil
}

// unmangleComment turns miekg/dns's "; text" back into "text": it drops
// the ";" and one blank, and undoes the blank it puts before every further
// ";" inside the comment.
func unmangleComment(c string) string {
	c, _ = strings.CutPrefix(c, ";")
	c, _ = strings.CutPrefix(c, " ")
	return strings.ReplaceAll(c, " ;", ";")
}

func relativeName(owner, zoneName string) (string, error) {
	owner = strings.ToLower(owner)
	origin := dns.Fqdn(zoneName)
	if owner == origin {
		return "@", nil
	}
	rel, ok := strings.CutSuffix(owner, "."+origin)
	if !ok {
		return "", fmt.Errorf("%w: %s is outside the zone", ErrZonefile, quoteShort(owner))
	}
	return rel, nil
}

// checkRequired wants one SOA and the assigned Hetzner NS at the apex.
func checkRequired(sets map[string]*RRSet) error {
	soa, ok := sets["@/SOA"]
	if !ok || len(soa.Records) != 1 {
		return fmt.Errorf("%w: exactly one SOA record at @ is required", ErrZonefile)
	}
	ns := sets["@/NS"]
	for _, want := range HetznerNameservers {
		if ns == nil || !slices.ContainsFunc(ns.Records, func(r Record) bool { return strings.ToLower(r.Value) == want }) {
			return fmt.Errorf("%w: the assigned nameserver %s must be present", ErrZonefile, want)
		}
	}
	return nil
}

// importInto replaces every RRSet of z by the zone file's; z is not stored
// yet (zone creation).
func (s *Server) importInto(z *zone, text string) *apiError {
	p, err := ParseZonefile(text, z.Name, z.TTL)
	if err != nil {
		return invalidField("zonefile", err.Error())
	}
	s.applyImport(z, p)
	return nil
}

// applyImport replaces all RRSets (labels and protection reset) and bumps the
// serial.
func (s *Server) applyImport(z *zone, p *ParsedZonefile) {
	if p.TTL != nil {
		z.TTL = *p.TTL
	}
	z.rrsets = map[string]*rrset{}
	for _, id := range sortedKeys(p.RRSets) {
		in := p.RRSets[id]
		s.putRRSet(z, in.Name, in.Type, in.TTL, in.Records)
	}
	s.bumpSerial(z)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// ExportZonefile renders RRSets as a BIND zone file that imports back to
// the same RRSets.
func ExportZonefile(zoneName string, zoneTTL int, rrsets []RRSet) string {
	sets := slices.Clone(rrsets)
	slices.SortFunc(sets, compareExport)
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s\n$TTL %d\n", dns.Fqdn(zoneName), zoneTTL)
	for _, rs := range sets {
		ttl := ""
		if rs.TTL != nil {
			ttl = strconv.Itoa(*rs.TTL)
		}
		for _, r := range rs.Records {
			fmt.Fprintf(&b, "%s\t%s\tIN\t%s\t%s", rs.Name, ttl, rs.Type, r.Value)
			if r.Comment != "" {
				fmt.Fprintf(&b, " ; %s", r.Comment)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// compareExport puts the apex first, SOA before everything else.
func compareExport(a, b RRSet) int {
	rank := func(r RRSet) int {
		switch {
		case r.Name == "@" && r.Type == "SOA":
			return 0
		case r.Name == "@":
			return 1
		}
		return 2
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type, b.Type))
}
