package localzone

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// Limits on what a zone file may hold: the record budget (charged before
// de-duplication, $GENERATE ranges before expansion) and the size, both
// the zonefile package's, for imports and files found on disk alike.
const (
	maxZonefileBytes = zonefile.MaxBytes
	maxRecords       = zonefile.MaxRecords
	fallbackTTL      = 3600 // a zone file without $TTL
	// inheritedTTL marks records that state no TTL: the first $TTL is read
	// as this value, and so is the default before it. It is above the
	// largest TTL the model allows, so an explicit TTL (0 included) is
	// never mistaken for an inherited one.
	inheritedTTL = math.MaxUint32
)

// record is one value of an RRSet in canonical zone-file syntax (absolute
// names, the text miekg/dns prints) and its comment.
type record struct {
	value   string
	comment string
}

// rrset is all records of one (name, type) pair. A nil ttl means the zone
// default; in the zone file such records carry no TTL and inherit $TTL.
type rrset struct {
	name    string // relative, lower case, "@" for the apex
	typ     string
	ttl     *int
	records []record
}

func (s *rrset) key() string { return s.name + "/" + s.typ }

// zoneData is a primary zone as its zone file states it. The zone file is
// the truth about records, TTLs and comments; the sidecar adds what a zone
// file cannot say.
type zoneData struct {
	name string // "example.com", no trailing dot
	ttl  int    // $TTL, the default of RRSets whose ttl is nil
	sets map[string]*rrset
	// parsedWith is the zone default TTL an import was parsed with.
	parsedWith int
	// orders holds the sorted RRSets of a cached zone (nil otherwise).
	orders *setOrders
}

// origin is the zone's name as an absolute domain name.
func (z *zoneData) origin() string { return z.name + "." }

// recordCount counts the records of every RRSet, SOA and NS included.
func (z *zoneData) recordCount() int {
	n := 0
	for _, s := range z.sets {
		n += len(s.records)
	}
	return n
}

// clone returns a deep copy of z, for a mutation to change.
func (z *zoneData) clone() *zoneData {
	c := &zoneData{name: z.name, ttl: z.ttl, sets: make(map[string]*rrset, len(z.sets))}
	for k, s := range z.sets {
		cs := *s
		cs.records = slices.Clone(s.records)
		if s.ttl != nil {
			t := *s.ttl
			cs.ttl = &t
		}
		c.sets[k] = &cs
	}
	return c
}

// syntaxError is a zone file that does not parse or breaks a structural rule;
// the message carries miekg/dns's line and column when it has them.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

func syntaxErrorf(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...)}
}

// parseOptions says how strictly parseZonefile reads.
type parseOptions struct {
	// strictOrigin requires every $ORIGIN to be the zone's name (an import);
	// otherwise an $ORIGIN anywhere inside the zone is fine (a file on disk).
	strictOrigin bool
	// defaultTTL is the zone TTL when the file has no $TTL.
	defaultTTL int
	// optionalSOA accepts a file without an SOA (a zone's creation, which
	// supplies one).
	optionalSOA bool
}

// parseZonefile reads a master file of zone into the model. Records without
// a TTL under the first $TTL become RRSets with a nil ttl; to tell them from
// records that state a TTL, that one directive is read as inheritedTTL (a
// TTL the model never allows). The record budget is charged before
// de-duplication, and the parse stops when ctx ends.
func parseZonefile(ctx context.Context, text, zone string, po parseOptions) (*zoneData, error) {
	if len(text) > maxZonefileBytes {
		return nil, syntaxErrorf("zone file is larger than %d bytes", maxZonefileBytes)
	}
	z := &zoneData{name: zone, ttl: po.defaultTTL, sets: map[string]*rrset{}}
	text, ttl, hasTTL, err := scanDirectives(text, z.origin(), po.strictOrigin)
	if err != nil {
		return nil, err
	}
	if hasTTL {
		z.ttl = ttl
	}
	seen := map[string]struct{}{}
	err = zonefile.Records(ctx, text, z.origin(), zonefile.Options{Max: maxRecords, DefaultTTL: inheritedTTL},
		func(rr mdns.RR, comment string) error { return z.addParsed(rr, comment, seen) })
	var ze *zonefile.Error
	switch {
	case errors.As(err, &ze):
		return nil, syntaxErrorf("%s", ze.Msg)
	case err != nil:
		return nil, err
	}
	if po.optionalSOA && z.sets["@/SOA"] == nil {
		return z, nil
	}
	return z, z.checkApex()
}

// addParsed files one parsed record into its RRSet; seen holds the
// records filed so far ("key value").
func (z *zoneData) addParsed(rr mdns.RR, comment string, seen map[string]struct{}) error {
	h := rr.Header()
	if h.Class != mdns.ClassINET {
		return syntaxErrorf("record %s: only class IN is supported", ownerType(h))
	}
	name, ok := relativeName(h.Name, z.origin())
	if !ok {
		return syntaxErrorf("record %s is outside the zone %s", ownerType(h), z.name)
	}
	typ := mdns.Type(h.Rrtype).String()
	s := z.sets[name+"/"+typ]
	if s == nil {
		s = &rrset{name: name, typ: typ}
		z.sets[s.key()] = s
	}
	value := rdataText(rr)
	if strings.TrimSpace(value) == "" {
		return syntaxErrorf("record %s has no data", ownerType(h))
	}
	id := s.key() + " " + value
	if _, dup := seen[id]; dup {
		return nil // an RRSet is a set: the same value twice is one record
	}
	seen[id] = struct{}{}
	ttl := int(h.Ttl)
	if h.Ttl == inheritedTTL {
		ttl = -1
	}
	s.records = append(s.records, record{value: value, comment: cleanComment(comment)})
	s.ttl = mergeTTL(s.ttl, len(s.records) == 1, ttl, z.ttl)
	return nil
}

// mergeTTL folds a record's TTL (-1: inherited) into its RRSet's. Records of
// one RRSet should share a TTL; when they do not, the smallest wins.
func mergeTTL(cur *int, first bool, ttl, zoneTTL int) *int {
	if first {
		if ttl < 0 {
			return nil
		}
		return &ttl
	}
	eff := func(p *int) int {
		if p == nil {
			return zoneTTL
		}
		return *p
	}
	if ttl < 0 {
		ttl = zoneTTL
		if cur == nil {
			return nil
		}
	}
	if ttl == eff(cur) {
		return cur
	}
	m := min(ttl, eff(cur))
	return &m
}

// checkApex enforces the structure every zone needs: one SOA, at the apex.
func (z *zoneData) checkApex() error {
	for _, s := range z.sets {
		if s.typ == "SOA" && s.name != "@" {
			return syntaxErrorf("SOA record at %s: an SOA belongs at the apex", s.name)
		}
	}
	soa := z.sets["@/SOA"]
	if soa == nil {
		return syntaxErrorf("zone file has no SOA record")
	}
	if len(soa.records) != 1 {
		return syntaxErrorf("zone file has %d SOA records, want 1", len(soa.records))
	}
	return nil
}

// scanDirectives checks the $ORIGIN lines and finds the first $TTL, which it
// rewrites to inheritedTTL (see parseZonefile). Line numbers stay as they were.
func scanDirectives(text, origin string, strictOrigin bool) (string, int, bool, error) {
	ttl, hasTTL, lineNo := 0, false, 0
	var out []byte
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text) - off
		}
		line := text[off : off+end]
		lineNo++
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 2 && strings.EqualFold(fields[0], "$ORIGIN"):
			if err := checkOrigin(fields[1], origin, strictOrigin, lineNo); err != nil {
				return "", 0, false, err
			}
		case len(fields) >= 2 && strings.EqualFold(fields[0], "$TTL") && !hasTTL && line[0] == '$':
			v, ok := parseTTLText(fields[1])
			if !ok || v < minTTL || v > maxTTL {
				return "", 0, false, syntaxErrorf("$TTL %q at line %d: want a TTL from %d to %d", bound(fields[1]), lineNo, minTTL, maxTTL)
			}
			ttl, hasTTL = v, true
			out = append(append(append([]byte(nil), text[:off]...), "$TTL "+strconv.FormatUint(inheritedTTL, 10)...), text[off+end:]...)
		}
		off += end + 1
	}
	if out != nil {
		text = string(out)
	}
	return text, ttl, hasTTL, nil
}

// checkOrigin accepts an $ORIGIN equal to the zone's or, unless strict,
// any absolute name inside it.
func checkOrigin(v, origin string, strict bool, line int) error {
	v = strings.ToLower(v)
	if v == origin {
		return nil
	}
	if !strict && strings.HasSuffix(v, "."+origin) {
		return nil
	}
	return syntaxErrorf("$ORIGIN %q at line %d: must be %s", bound(v), line, origin)
}

// parseTTLText reads a TTL in seconds or BIND's units (1h30m, 2d, 1w).
func parseTTLText(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil || s == "" {
		return n, err == nil && n >= 0 && n <= maxTTL
	}
	total, cur := 0, 0
	digits := false
	for _, c := range strings.ToLower(s) {
		if c >= '0' && c <= '9' {
			cur, digits = cur*10+int(c-'0'), true
			if cur > maxTTL {
				return 0, false
			}
			continue
		}
		mult := map[rune]int{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 604800}[c]
		if mult == 0 || !digits {
			return 0, false
		}
		total += cur * mult
		if total > maxTTL {
			return 0, false
		}
		cur, digits = 0, false
	}
	return total + cur, !digits || total == 0
}

// relativeName turns an absolute owner into a name relative to origin.
func relativeName(owner, origin string) (string, bool) {
	owner = strings.ToLower(owner)
	if owner == origin {
		return "@", true
	}
	if rel, ok := strings.CutSuffix(owner, "."+origin); ok && rel != "" {
		return rel, true
	}
	return "", false
}

// absoluteName is the inverse of relativeName.
func absoluteName(name, origin string) string {
	if name == "@" {
		return origin
	}
	return name + "." + origin
}

// rdataText is a record's value: its text form without the header.
func rdataText(rr mdns.RR) string { return zonefile.RdataText(rr) }

// cleanComment turns a parser comment ("; text") into the stored text.
func cleanComment(c string) string {
	c = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(c, "\uFFFD"))
	c = strings.TrimSpace(c)
	for strings.HasPrefix(c, ";") {
		c = strings.TrimSpace(c[1:])
	}
	return c
}

func ownerType(h *mdns.RR_Header) string {
	return bound(h.Name + " " + mdns.Type(h.Rrtype).String())
}

// sortedSets returns the RRSets in file order: the SOA, the apex NS, then
// by name ("@" first) and type.
func (z *zoneData) sortedSets() []*rrset {
	sets := make([]*rrset, 0, len(z.sets))
	for _, s := range z.sets {
		sets = append(sets, s)
	}
	rank := func(s *rrset) int {
		switch {
		case s.typ == "SOA":
			return 0
		case s.name == "@" && s.typ == "NS":
			return 1
		case s.name == "@":
			return 2
		}
		return 3
	}
	slices.SortFunc(sets, func(a, b *rrset) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.typ, b.typ)
	})
	return sets
}

// render prints z as an RFC 1035 master file: $ORIGIN, $TTL, the SOA first,
// one record a line, comments after the value. Records of RRSets with a nil
// ttl carry no TTL and inherit $TTL.
func (z *zoneData) render() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "; zone %s, written by bulwark dns (local provider).\n", z.name)
	fmt.Fprintf(&b, "; Labels, protection and the action history are in %s.\n", sidecarFile(z.name))
	fmt.Fprintf(&b, "$ORIGIN %s\n$TTL %d\n", z.origin(), z.ttl)
	for _, s := range z.sortedSets() {
		for _, r := range s.records {
			b.WriteString(s.name)
			if s.ttl != nil {
				b.WriteByte('\t')
				b.WriteString(strconv.Itoa(*s.ttl))
			}
			b.WriteString("\tIN\t")
			b.WriteString(s.typ)
			b.WriteByte('\t')
			b.WriteString(r.value)
			if r.comment != "" {
				b.WriteString(" ; ")
				b.WriteString(r.comment)
			}
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// soa parses the zone's SOA record.
func (z *zoneData) soa() (*mdns.SOA, error) {
	s := z.sets["@/SOA"]
	if s == nil || len(s.records) != 1 {
		return nil, errors.New("zone has no single SOA record")
	}
	rr, err := mdns.NewRR(z.origin() + " 3600 IN SOA " + s.records[0].value)
	if err != nil {
		return nil, fmt.Errorf("parsing SOA: %w", err)
	}
	soa, ok := rr.(*mdns.SOA)
	if !ok {
		return nil, errors.New("SOA record does not parse as SOA")
	}
	return soa, nil
}

// setSOA replaces the SOA record's value, keeping its comment.
func (z *zoneData) setSOA(soa *mdns.SOA) {
	s := z.sets["@/SOA"]
	s.records[0].value = rdataText(soa)
}
