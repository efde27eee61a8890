package localzone

import (
	"slices"
	"sort"
	"strings"

	mdns "github.com/miekg/dns"
)

// The DNSSEC parts of an answer from a signed zone, to a query with the DO
// bit (RFC 4035 §3.1): the RRSIG of each RRset answered, the SOA's RRSIG
// in negative answers, the NSEC (RFC 4035 §3.1.3) or NSEC3 (RFC 5155
// §7.2) records that prove what does not exist, and at a delegation the DS
// or the proof that there is none.

// signedFor reports whether answers from z carry DNSSEC data for m.
func (z *zoneIndex) signedFor(do bool) bool { return do && z.sec != nil }

// sigsOf are the RRSIGs of n's RRset of type t, named qname when the
// answer comes from a wildcard.
func sigsOf(n *node, t uint16, qname string, synth bool) []mdns.RR {
	return appendRRs(nil, n.sigs[t], qname, synth)
}

// negative is the authority section of a negative answer: the SOA with
// the negative TTL, and its RRSIG.
func (z *zoneIndex) negative() []mdns.RR {
	out := slices.Clone(z.negSOA)
	for _, s := range z.nodes[z.origin].sigs[mdns.TypeSOA] {
		c := mdns.Copy(s)
		c.Header().Ttl = z.negSOA[0].Header().Ttl
		out = append(out, c)
	}
	return out
}

// addProof appends rrs to the authority section, each record once.
func addProof(m *mdns.Msg, rrs ...mdns.RR) {
	for _, rr := range rrs {
		if !slices.Contains(m.Ns, rr) {
			m.Ns = append(m.Ns, rr)
		}
	}
}

// closestEncloser is the longest name above qname that exists (empty
// non-terminals included), and the next closer name below it on the way
// to qname.
func (z *zoneIndex) closestEncloser(qname string) (ce, next string) {
	next = qname
	for p := parentName(qname); p != ""; p = parentName(p) {
		if _, ok := z.nodes[p]; ok {
			return p, next
		}
		next = p
	}
	return z.origin, next
}

// proveNoName proves qname does not exist (NXDOMAIN), nor a wildcard
// that would answer for it.
func (z *zoneIndex) proveNoName(m *mdns.Msg, qname string) {
	ce, next := z.closestEncloser(qname)
	if z.sec.denial == DenialNSEC3 {
		addProof(m, z.nsec3Match(ce)...)
		addProof(m, z.nsec3Cover(next)...)
		addProof(m, z.nsec3Cover("*."+ce)...)
		return
	}
	addProof(m, z.nsecCover(qname)...)
	addProof(m, z.nsecCover("*."+ce)...)
}

// proveWildcard proves that no name closer than the wildcard answers
// qname (RFC 4035 §3.1.3.3, RFC 5155 §7.2.6).
func (z *zoneIndex) proveWildcard(m *mdns.Msg, qname string) {
	if z.sec.denial == DenialNSEC3 {
		_, next := z.closestEncloser(qname)
		addProof(m, z.nsec3Cover(next)...)
		return
	}
	addProof(m, z.nsecCover(qname)...)
}

// proveNoData proves that qname (n; from a wildcard when synth) has no
// RRset of the type asked.
func (z *zoneIndex) proveNoData(m *mdns.Msg, qname string, n *node, synth bool) {
	if synth {
		ce, _ := z.closestEncloser(qname)
		if z.sec.denial == DenialNSEC3 {
			z.proveNoName(m, qname) // the closest encloser proof
			addProof(m, z.nsec3Match("*."+ce)...)
			return
		}
		addProof(m, z.nsecCover(qname)...)
		addProof(m, z.nsecAt("*."+ce)...)
		return
	}
	if z.sec.denial == DenialNSEC3 {
		addProof(m, z.nsec3Match(qname)...)
		return
	}
	if len(n.sets) == 0 {
		addProof(m, z.nsecCover(qname)...) // an empty non-terminal
		return
	}
	addProof(m, z.nsecAt(qname)...)
}

// proveDelegation adds a referral's DS and its RRSIG, or the proof that
// the delegation has no DS (an insecure delegation).
func (z *zoneIndex) proveDelegation(m *mdns.Msg, name string, cut *node) {
	if ds := cut.get(mdns.TypeDS); ds != nil {
		m.Ns = append(append(m.Ns, ds...), cut.sigs[mdns.TypeDS]...)
		return
	}
	if z.sec.denial == DenialNSEC3 {
		addProof(m, z.nsec3Match(name)...)
		return
	}
	addProof(m, z.nsecAt(name)...)
}

// nsecAt is the NSEC of an existing name and its RRSIG.
func (z *zoneIndex) nsecAt(name string) []mdns.RR {
	n := z.nodes[name]
	if n == nil {
		return nil
	}
	return append(slices.Clone(n.get(mdns.TypeNSEC)), n.sigs[mdns.TypeNSEC]...)
}

// nsecCover is the NSEC of the last name before name in canonical order
// (the one whose span covers it), and its RRSIG.
func (z *zoneIndex) nsecCover(name string) []mdns.RR {
	order := z.sec.order
	i := sort.Search(len(order), func(i int) bool { return canonicalCompare(order[i], name) >= 0 })
	if i < len(order) && order[i] == name {
		return z.nsecAt(name)
	}
	prev := order[(i-1+len(order))%len(order)]
	return z.nsecAt(prev)
}

// nsec3Match is the NSEC3 (and RRSIG) whose owner is name's hash.
func (z *zoneIndex) nsec3Match(name string) []mdns.RR {
	h := strings.ToLower(mdns.HashName(name, mdns.SHA1, 0, ""))
	e := z.sec.nsec3
	i := sort.Search(len(e), func(i int) bool { return e[i].hash >= h })
	if i < len(e) && e[i].hash == h {
		return e[i].rrs
	}
	return nil
}

// nsec3Cover is the NSEC3 (and RRSIG) whose span covers name's hash.
func (z *zoneIndex) nsec3Cover(name string) []mdns.RR {
	h := strings.ToLower(mdns.HashName(name, mdns.SHA1, 0, ""))
	e := z.sec.nsec3
	i := sort.Search(len(e), func(i int) bool { return e[i].hash >= h })
	if i < len(e) && e[i].hash == h {
		return e[i].rrs
	}
	return e[(i-1+len(e))%len(e)].rrs
}
