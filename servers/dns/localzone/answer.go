package localzone

import (
	"strings"

	mdns "github.com/miekg/dns"
)

// maxChain bounds how many CNAMEs inside a zone an answer follows.
const maxChain = 8

// answer builds the reply to req from snapshot s. udp says the reply goes
// over UDP and must fit the client's buffer (TC set when it does not).
func (r *Responder) answer(s *snapshot, req *mdns.Msg, udp bool) *mdns.Msg {
	m := new(mdns.Msg)
	m.SetReply(req)
	if req.Opcode != mdns.OpcodeQuery {
		m.Rcode = mdns.RcodeNotImplemented
		return m
	}
	if len(req.Question) != 1 {
		m.Rcode = mdns.RcodeFormatError
		return m
	}
	size := mdns.MinMsgSize
	opt := req.IsEdns0()
	if opt != nil {
		if opt.Version() != 0 {
			m.Rcode = mdns.RcodeBadVers
			m.SetEdns0(uint16(r.udpSize), opt.Do())
			return m
		}
		size = max(mdns.MinMsgSize, min(int(opt.UDPSize()), r.udpSize))
	}
	r.resolve(s, m, req.Question[0], opt != nil && opt.Do())
	if opt != nil {
		// A copy: packing a message writes the extended rcode into its
		// OPT, and answers are packed concurrently.
		o := *r.opt[boolInt(opt.Do())]
		m.Extra = append(m.Extra, &o)
	}
	if udp {
		m.Truncate(size)
	} else {
		m.Compress = true
	}
	return m
}

// resolve fills in m for question q; do is the query's DO bit.
func (r *Responder) resolve(s *snapshot, m *mdns.Msg, q mdns.Question, do bool) {
	switch {
	case q.Qclass != mdns.ClassINET:
		m.Rcode = mdns.RcodeRefused
		return
	case q.Qtype == mdns.TypeAXFR || q.Qtype == mdns.TypeIXFR:
		m.Rcode = mdns.RcodeRefused // no zone transfers
		return
	}
	qname := strings.ToLower(q.Name)
	z := s.findZone(qname)
	if z == nil {
		m.Rcode = mdns.RcodeRefused
		return
	}
	if z.broken {
		m.Rcode = mdns.RcodeServerFailure
		return
	}
	m.Authoritative = true
	z.lookup(m, qname, q.Qtype, 0, z.signedFor(do))
}

// findZone returns the zone with the longest origin qname is in.
func (s *snapshot) findZone(qname string) *zoneIndex {
	for name := qname; name != ""; name = parentName(name) {
		if z := s.zones[name]; z != nil {
			return z
		}
	}
	return nil
}

// lookup answers qname/qtype inside z: a referral below a delegation, an
// exact match, a CNAME (followed inside the zone), a wildcard (RFC 4592),
// NODATA or NXDOMAIN (both with the SOA for negative caching). With sec,
// the answer carries the zone's DNSSEC data (dnssec_answer.go).
func (z *zoneIndex) lookup(m *mdns.Msg, qname string, qtype uint16, depth int, sec bool) {
	if z.hasCuts {
		if name, cut := z.findCut(qname); cut != nil && !(qtype == mdns.TypeDS && name == qname) {
			if depth == 0 {
				m.Authoritative = false
			}
			m.Ns = append(m.Ns, cut.get(mdns.TypeNS)...)
			m.Extra = append(m.Extra, cut.glue...)
			if sec {
				z.proveDelegation(m, name, cut)
			}
			return
		}
	}
	n, synth := z.nodes[qname], false
	if n == nil {
		if n = z.wildcard(qname); n == nil {
			m.Rcode = mdns.RcodeNameError
			z.denyName(m, qname, sec)
			return
		}
		synth = true
	}
	t := qtype
	if qtype == mdns.TypeANY && len(n.sets) > 0 {
		t = n.sets[minTypeSet(n.sets)].typ
	}
	if rrs := n.get(t); rrs != nil {
		z.answerSet(m, n, t, rrs, qname, synth, sec)
		return
	}
	if cname := n.get(mdns.TypeCNAME); cname != nil {
		z.answerSet(m, n, mdns.TypeCNAME, cname, qname, synth, sec)
		target := strings.ToLower(cname[0].(*mdns.CNAME).Target)
		if depth < maxChain && mdns.IsSubDomain(z.origin, target) {
			z.lookup(m, target, qtype, depth+1, sec)
		}
		return
	}
	m.Ns = z.negSOA
	if sec {
		m.Ns = z.negative()
		z.proveNoData(m, qname, n, synth)
	}
}

// answerSet adds one RRset (and with sec its RRSIG, and for a wildcard
// the proof that no closer name exists) to the answer.
func (z *zoneIndex) answerSet(m *mdns.Msg, n *node, t uint16, rrs []mdns.RR, qname string, synth, sec bool) {
	m.Answer = appendRRs(m.Answer, rrs, qname, synth)
	if !sec {
		return
	}
	m.Answer = append(m.Answer, sigsOf(n, t, qname, synth)...)
	if synth {
		z.proveWildcard(m, qname)
	}
}

// denyName fills in the authority section of an NXDOMAIN.
func (z *zoneIndex) denyName(m *mdns.Msg, qname string, sec bool) {
	m.Ns = z.negSOA
	if sec {
		m.Ns = z.negative()
		z.proveNoName(m, qname)
	}
}

// findCut returns the topmost delegation point at or above qname, below
// the apex, and its name.
func (z *zoneIndex) findCut(qname string) (string, *node) {
	var cut *node
	at := ""
	for name := qname; name != z.origin && name != ""; name = parentName(name) {
		if n := z.nodes[name]; n != nil && n.cut {
			cut, at = n, name
		}
	}
	return at, cut
}

// wildcard returns the node "*.<closest encloser>" of a qname that does not
// exist, or nil. The closest encloser is the longest existing ancestor
// (empty non-terminals exist), so a wildcard never covers names below an
// existing name other than its own parent.
func (z *zoneIndex) wildcard(qname string) *node {
	for ce := parentName(qname); ce != ""; ce = parentName(ce) {
		if _, ok := z.nodes[ce]; ok {
			return z.nodes["*."+ce]
		}
		if ce == z.origin {
			break
		}
	}
	return nil
}

// appendRRs appends rrs to answer; for a wildcard match, copies named
// qname.
func appendRRs(answer, rrs []mdns.RR, qname string, synth bool) []mdns.RR {
	if !synth {
		if answer == nil {
			return rrs // capacity == length: a later append copies
		}
		return append(answer, rrs...)
	}
	for _, rr := range rrs {
		c := mdns.Copy(rr)
		c.Header().Name = qname
		answer = append(answer, c)
	}
	return answer
}

// minTypeSet is the index of the set with the lowest type: the one RRset
// an ANY query gets (RFC 8482 §4.1).
func minTypeSet(sets []typedSet) int {
	best := 0
	for i := range sets {
		if sets[i].typ < sets[best].typ {
			best = i
		}
	}
	return best
}
