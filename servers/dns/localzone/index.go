package localzone

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	mdns "github.com/miekg/dns"
)

// zoneIndex is one zone prepared for answering: every owner name (and
// every empty non-terminal above one) maps to its node, so a query is a
// few map lookups. RR values are shared by every answer and never changed.
type zoneIndex struct {
	origin string // lower case, absolute
	nodes  map[string]*node
	// all is every record in file order, the SOA among them: what a zone
	// transfer sends.
	all []mdns.RR
	// negSOA is the SOA with the negative-caching TTL (min of the SOA's
	// TTL and MINIMUM, RFC 2308), as a slice ready for the authority
	// section.
	negSOA []mdns.RR
	// hasCuts is set when NS records below the apex delegate subzones.
	hasCuts bool
	// broken is set for a zone whose file never parsed: it answers
	// SERVFAIL.
	broken bool
	// sec is the DNSSEC data of a signed zone (dnssec_sign.go), nil
	// for an unsigned one.
	sec *signedZone
}

// node is one owner name: its RRsets, and for a delegation point the glue.
type node struct {
	sets []typedSet
	cut  bool      // NS here, below the apex: a delegation
	glue []mdns.RR // A/AAAA of the delegation's nameservers found in the zone
	// sigs are the RRSIGs of a signed zone's RRsets, by the type they
	// cover.
	sigs map[uint16][]mdns.RR
}

type typedSet struct {
	typ uint16
	rrs []mdns.RR // cap == len, so appending to an answer never writes here
}

// soa is the zone's SOA (buildIndex made sure there is one).
func (z *zoneIndex) soa() *mdns.SOA {
	if n := z.nodes[z.origin]; n != nil {
		if rrs := n.get(mdns.TypeSOA); len(rrs) == 1 {
			return rrs[0].(*mdns.SOA)
		}
	}
	return nil
}

// get returns the RRs of type t (nil when none).
func (n *node) get(t uint16) []mdns.RR {
	for i := range n.sets {
		if n.sets[i].typ == t {
			return n.sets[i].rrs
		}
	}
	return nil
}

// readIndex parses the zone file of zone as a server reads it (real TTLs,
// $TTL 3600 when absent) and indexes it.
func readIndex(dir, zone string) (*zoneIndex, error) {
	f, err := os.Open(filepath.Join(dir, zoneFile(zone)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	origin := zone + "."
	zp := mdns.NewZoneParser(io.LimitReader(f, maxZonefileBytes), origin, "")
	zp.SetIncludeAllowed(false)
	zp.SetDefaultTTL(fallbackTTL)
	var rrs []mdns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if len(rrs) >= maxRecords {
			return nil, fmt.Errorf("more than %d records", maxRecords)
		}
		rrs = append(rrs, rr)
	}
	if err := zp.Err(); err != nil {
		return nil, err
	}
	return buildIndex(origin, rrs)
}

// buildIndex files rrs (all inside origin, class IN, one SOA at the apex)
// into a zoneIndex.
func buildIndex(origin string, rrs []mdns.RR) (*zoneIndex, error) {
	z := &zoneIndex{origin: origin, nodes: make(map[string]*node, len(rrs)), all: rrs}
	z.nodes[origin] = &node{}
	for _, rr := range rrs {
		h := rr.Header()
		h.Name = strings.ToLower(h.Name)
		if h.Class != mdns.ClassINET || !mdns.IsSubDomain(origin, h.Name) {
			return nil, fmt.Errorf("record %s outside the zone or not class IN", ownerType(h))
		}
		z.add(rr)
	}
	soa := z.nodes[origin].get(mdns.TypeSOA)
	if len(soa) != 1 {
		return nil, fmt.Errorf("zone %s has %d SOA records at the apex, want 1", origin, len(soa))
	}
	neg := mdns.Copy(soa[0]).(*mdns.SOA)
	neg.Hdr.Ttl = min(neg.Hdr.Ttl, neg.Minttl)
	z.negSOA = []mdns.RR{neg}
	z.finish()
	return z, nil
}

// add files one record under its owner, creating the empty non-terminals
// between the owner and the apex.
func (z *zoneIndex) add(rr mdns.RR) {
	name := rr.Header().Name
	n := z.nodes[name]
	if n == nil {
		n = &node{}
		z.nodes[name] = n
		for p := parentName(name); p != "" && mdns.IsSubDomain(z.origin, p); p = parentName(p) {
			if _, ok := z.nodes[p]; ok {
				break
			}
			z.nodes[p] = &node{}
		}
	}
	t := rr.Header().Rrtype
	for i := range n.sets {
		if n.sets[i].typ == t {
			n.sets[i].rrs = append(n.sets[i].rrs, rr)
			return
		}
	}
	n.sets = append(n.sets, typedSet{typ: t, rrs: []mdns.RR{rr}})
}

// finish caps every RR slice, marks delegation points and collects glue.
func (z *zoneIndex) finish() {
	for name, n := range z.nodes {
		for i := range n.sets {
			s := &n.sets[i]
			s.rrs = s.rrs[:len(s.rrs):len(s.rrs)]
		}
		ns := n.get(mdns.TypeNS)
		if name == z.origin || ns == nil {
			continue
		}
		n.cut, z.hasCuts = true, true
		for _, rr := range ns {
			target := strings.ToLower(rr.(*mdns.NS).Ns)
			if t := z.nodes[target]; t != nil {
				n.glue = append(n.glue, t.get(mdns.TypeA)...)
				n.glue = append(n.glue, t.get(mdns.TypeAAAA)...)
			}
		}
		n.glue = n.glue[:len(n.glue):len(n.glue)]
	}
}

// parentName drops the first label ("" for the root).
func parentName(name string) string {
	i, _ := mdns.NextLabel(name, 0)
	if i <= 0 || i >= len(name) {
		return ""
	}
	return name[i:]
}
