package rfc2136

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// zoneState is a zone as one transfer (or a chain of them) gave it. It is
// never changed once kept: an IXFR makes a new state sharing the RRSets it
// did not touch.
type zoneState struct {
	zone    *zoneConf
	soa     *mdns.SOA
	sets    map[setKey]*rrset
	records int // every record, SOA included
}

// setKey names an RRSet: its owner relative to the zone ("@" for the apex)
// and its type.
type setKey struct {
	name string
	typ  uint16
}

// rrset is all records of one owner and type. Records keep the owner in
// lower case; ttl is the smallest TTL of its records (RFC 2181 §5.2 asks
// them to agree).
type rrset struct {
	ttl uint32
	rrs []mdns.RR
}

// fromAXFR builds a zone from the records of a transfer in AXFR form: the
// SOA, the records, the SOA. Records outside the zone or of another class
// refuse the whole transfer; duplicates are one record.
func fromAXFR(zc *zoneConf, rrs []mdns.RR) (*zoneState, error) {
	soa, ok := rrs[0].(*mdns.SOA)
	if !ok || mdns.CanonicalName(soa.Hdr.Name) != zc.origin {
		return nil, upstreamMalformed("the zone transfer's SOA is not the zone's")
	}
	st := &zoneState{zone: zc, soa: soa, sets: make(map[setKey]*rrset, len(rrs))}
	for _, rr := range rrs[:len(rrs)-1] {
		if err := st.check(rr); err != nil {
			return nil, err
		}
		st.file(rr)
	}
	return st, nil
}

// check refuses a record a transfer of this zone cannot hold.
func (st *zoneState) check(rr mdns.RR) error {
	h := rr.Header()
	switch {
	case h.Class != mdns.ClassINET:
		return upstreamMalformed("the zone transfer holds a record of another class than IN")
	case !mdns.IsSubDomain(st.zone.origin, mdns.CanonicalName(h.Name)):
		return upstreamMalformed("the zone transfer holds a record outside the zone")
	}
	return nil
}

// key is rr's RRSet key; it lower-cases rr's owner.
func (st *zoneState) key(rr mdns.RR) setKey {
	h := rr.Header()
	h.Name = mdns.CanonicalName(h.Name)
	return setKey{name: relative(h.Name, st.zone.origin), typ: h.Rrtype}
}

// file adds rr (already checked) to its RRSet in place, for a state being
// built that nothing shares yet.
func (st *zoneState) file(rr mdns.RR) {
	k := st.key(rr)
	s := st.sets[k]
	if s == nil {
		s = &rrset{ttl: rr.Header().Ttl}
		st.sets[k] = s
	} else if slices.ContainsFunc(s.rrs, func(o mdns.RR) bool { return mdns.IsDuplicate(o, rr) }) {
		return
	}
	s.ttl = min(s.ttl, rr.Header().Ttl)
	s.rrs = append(s.rrs, rr)
	st.records++
	if soa, ok := rr.(*mdns.SOA); ok && k.name == "@" {
		st.soa = soa
	}
}

// add files rr (already checked) into its RRSet, copying the RRSet first
// so that a state sharing it is not changed.
func (st *zoneState) add(rr mdns.RR) {
	k := st.key(rr)
	old := st.sets[k]
	if old != nil && slices.ContainsFunc(old.rrs, func(o mdns.RR) bool { return mdns.IsDuplicate(o, rr) }) {
		return
	}
	s := &rrset{ttl: rr.Header().Ttl}
	if old != nil {
		s.ttl = min(old.ttl, s.ttl)
		s.rrs = slices.Clip(old.rrs)
	}
	s.rrs = append(s.rrs, rr)
	st.sets[k] = s
	st.records++
	if soa, ok := rr.(*mdns.SOA); ok && k.name == "@" {
		st.soa = soa
	}
}

// remove takes rr out of its RRSet, reporting whether it was there.
func (st *zoneState) remove(rr mdns.RR) bool {
	k := st.key(rr)
	old := st.sets[k]
	if old == nil {
		return false
	}
	i := slices.IndexFunc(old.rrs, func(o mdns.RR) bool { return mdns.IsDuplicate(o, rr) })
	if i < 0 {
		return false
	}
	rest := slices.Delete(slices.Clone(old.rrs), i, i+1)
	st.records--
	if len(rest) == 0 {
		delete(st.sets, k)
		return true
	}
	s := &rrset{ttl: rest[0].Header().Ttl, rrs: rest}
	for _, r := range rest {
		s.ttl = min(s.ttl, r.Header().Ttl)
	}
	st.sets[k] = s
	return true
}

// apply makes the state after an incremental answer (RFC 1995 §4): per
// difference, the old SOA, the records deleted, the new SOA, the records
// added. A difference that does not start at the current serial, or
// deletes a record the zone lacks, is an error: the caller reads the whole
// zone instead.
func (st *zoneState) apply(rrs []mdns.RR) (*zoneState, error) {
	next := &zoneState{zone: st.zone, soa: st.soa, sets: maps.Clone(st.sets), records: st.records}
	final := rrs[0].(*mdns.SOA)
	body := rrs[1 : len(rrs)-1]
	for i := 0; i < len(body); {
		from, ok := body[i].(*mdns.SOA)
		if !ok || from.Serial != next.soa.Serial {
			return nil, fmt.Errorf("ixfr: a difference starts at serial %d, not %d", serialOf(body[i]), next.soa.Serial)
		}
		i++
		for ; i < len(body) && body[i].Header().Rrtype != mdns.TypeSOA; i++ {
			if next.check(body[i]) != nil || !next.remove(body[i]) {
				return nil, fmt.Errorf("ixfr: deletes a record the zone does not hold")
			}
		}
		if i == len(body) {
			return nil, fmt.Errorf("ixfr: a difference has no new SOA")
		}
		to := body[i].(*mdns.SOA)
		i++
		for ; i < len(body) && body[i].Header().Rrtype != mdns.TypeSOA; i++ {
			if err := next.check(body[i]); err != nil {
				return nil, err
			}
			next.add(body[i])
		}
		next.setSOA(to)
	}
	if next.soa.Serial != final.Serial {
		return nil, fmt.Errorf("ixfr: ends at serial %d, not %d", next.soa.Serial, final.Serial)
	}
	return next, nil
}

// setSOA replaces the apex SOA.
func (st *zoneState) setSOA(soa *mdns.SOA) {
	soa.Hdr.Name = st.zone.origin
	st.sets[setKey{name: "@", typ: mdns.TypeSOA}] = &rrset{ttl: soa.Hdr.Ttl, rrs: []mdns.RR{soa}}
	st.soa = soa
}

func serialOf(rr mdns.RR) uint32 {
	if soa, ok := rr.(*mdns.SOA); ok {
		return soa.Serial
	}
	return 0
}

// relative is owner relative to origin: "@" for the apex.
func relative(owner, origin string) string {
	if owner == origin {
		return "@"
	}
	return strings.TrimSuffix(owner, "."+origin)
}

// absolute is the inverse of relative.
func absolute(name, origin string) string {
	if name == "@" {
		return origin
	}
	return name + "." + origin
}

// sortedKeys are the RRSet keys in the order of the zone file: the SOA,
// the apex NS, the rest of the apex, then by name and type.
func (st *zoneState) sortedKeys() []setKey {
	keys := slices.Collect(maps.Keys(st.sets))
	rank := func(k setKey) int {
		switch {
		case k.typ == mdns.TypeSOA:
			return 0
		case k.name == "@" && k.typ == mdns.TypeNS:
			return 1
		case k.name == "@":
			return 2
		}
		return 3
	}
	slices.SortFunc(keys, func(a, b setKey) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(mdns.TypeToString[a.typ], mdns.TypeToString[b.typ])
	})
	return keys
}

// typeOf is a model type's code, false for a type outside the model.
func typeOf(typ string) (uint16, bool) {
	if !slices.Contains(dns.RRSetTypes, typ) {
		return 0, false
	}
	t, ok := mdns.StringToType[typ]
	return t, ok
}

// inModel: the type is one the tools speak of.
func inModel(t uint16) bool { return slices.Contains(dns.RRSetTypes, mdns.TypeToString[t]) }
