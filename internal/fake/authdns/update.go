package authdns

import (
	"strings"

	mdns "github.com/miekg/dns"
)

// update answers an UPDATE as RFC 2136 §3 orders it: zone section,
// authorization (a key the server holds), prerequisites, prescan, then the
// changes, all or nothing.
func (s *Server) update(w mdns.ResponseWriter, req *mdns.Msg) {
	s.updates.Add(1)
	m := s.reply(w, req)
	m.Rcode = s.updateRcode(w, req)
	_ = w.WriteMsg(m)
}

func (s *Server) updateRcode(w mdns.ResponseWriter, req *mdns.Msg) int {
	if len(req.Question) != 1 || req.Question[0].Qtype != mdns.TypeSOA {
		return mdns.RcodeFormatError // §3.1.1
	}
	if req.IsTsig() == nil {
		return mdns.RcodeRefused // the policy: only a key may update
	}
	if s.BeforeUpdate != nil {
		s.BeforeUpdate()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zones[strings.ToLower(req.Question[0].Name)]
	if z == nil {
		return mdns.RcodeNotAuth // §3.1.2
	}
	if rc := z.prerequisites(req.Answer); rc != mdns.RcodeSuccess {
		return rc
	}
	if rc := z.prescan(req.Ns); rc != mdns.RcodeSuccess {
		return rc
	}
	tx := z.begin()
	for _, rr := range req.Ns {
		tx.apply(rr)
	}
	tx.commit()
	return mdns.RcodeSuccess
}

// prerequisites checks §3.2: the class-ANY and class-NONE forms at once,
// the value-dependent RRsets together at the end.
func (z *zone) prerequisites(prs []mdns.RR) int {
	var temp []mdns.RR
	for _, rr := range prs {
		h := rr.Header()
		owner := strings.ToLower(h.Name)
		switch {
		case h.Ttl != 0:
			return mdns.RcodeFormatError
		case !mdns.IsSubDomain(z.origin, owner):
			return mdns.RcodeNotZone
		}
		switch h.Class {
		case mdns.ClassANY, mdns.ClassNONE:
			if h.Rdlength != 0 {
				return mdns.RcodeFormatError
			}
			if rc := z.existence(owner, h.Rrtype, h.Class == mdns.ClassANY); rc != mdns.RcodeSuccess {
				return rc
			}
		case mdns.ClassINET:
			temp = append(temp, rr)
		default:
			return mdns.RcodeFormatError
		}
	}
	return z.valueDependent(temp)
}

// existence checks one value-independent prerequisite: used (class ANY)
// or not used (class NONE), of a name (type ANY) or an RRset.
func (z *zone) existence(owner string, typ uint16, used bool) int {
	present := len(z.set(owner, typ)) > 0
	switch {
	case typ == mdns.TypeANY && used && !present:
		return mdns.RcodeNameError
	case typ == mdns.TypeANY && !used && present:
		return mdns.RcodeYXDomain
	case used && !present:
		return mdns.RcodeNXRrset
	case !used && present:
		return mdns.RcodeYXRrset
	}
	return mdns.RcodeSuccess
}

// valueDependent checks that each RRset named in temp is exactly the
// records given (§3.2.3): no more, no fewer; TTLs are not compared.
func (z *zone) valueDependent(temp []mdns.RR) int {
	type key struct {
		owner string
		typ   uint16
	}
	groups := map[key][]mdns.RR{}
	for _, rr := range temp {
		k := key{strings.ToLower(rr.Header().Name), rr.Header().Rrtype}
		groups[k] = append(groups[k], rr)
	}
	for k, want := range groups {
		have := z.set(k.owner, k.typ)
		if !sameRdata(have, want) {
			return mdns.RcodeNXRrset
		}
	}
	return mdns.RcodeSuccess
}

// sameRdata compares two record sets by data alone.
func sameRdata(a, b []mdns.RR) bool {
	covered := func(x, y []mdns.RR) bool {
		for _, r := range x {
			found := false
			for _, q := range y {
				if mdns.IsDuplicate(r, q) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return len(a) > 0 && covered(a, b) && covered(b, a)
}

// prescan checks the update section (§3.4.1) before anything changes.
func (z *zone) prescan(ups []mdns.RR) int {
	for _, rr := range ups {
		h := rr.Header()
		if !mdns.IsSubDomain(z.origin, strings.ToLower(h.Name)) {
			return mdns.RcodeNotZone
		}
		meta := h.Rrtype == mdns.TypeAXFR || h.Rrtype == mdns.TypeIXFR || h.Rrtype == mdns.TypeMAILA ||
			h.Rrtype == mdns.TypeMAILB || h.Rrtype == mdns.TypeOPT || h.Rrtype == mdns.TypeTSIG
		switch h.Class {
		case mdns.ClassINET:
			if meta || h.Rrtype == mdns.TypeANY {
				return mdns.RcodeFormatError
			}
		case mdns.ClassANY:
			if h.Ttl != 0 || h.Rdlength != 0 || meta {
				return mdns.RcodeFormatError
			}
		case mdns.ClassNONE:
			if h.Ttl != 0 || meta || h.Rrtype == mdns.TypeANY {
				return mdns.RcodeFormatError
			}
		default:
			return mdns.RcodeFormatError
		}
	}
	return mdns.RcodeSuccess
}

// tx is a change to a zone in progress: it works on a copy of the records
// and journals what it deleted and added.
type tx struct {
	z        *zone
	rrs      []mdns.RR
	del, add []mdns.RR
}

func (z *zone) begin() *tx {
	return &tx{z: z, rrs: append([]mdns.RR(nil), z.rrs...)}
}

// apply carries out one update RR (§3.4.2).
func (t *tx) apply(rr mdns.RR) {
	h := rr.Header()
	owner := strings.ToLower(h.Name)
	apex := owner == t.z.origin
	switch h.Class {
	case mdns.ClassINET:
		rr = mdns.Copy(rr)
		rr.Header().Name = owner
		t.addChecked(rr, apex)
	case mdns.ClassANY:
		for _, r := range t.matching(owner, h.Rrtype) {
			if apex && (r.Header().Rrtype == mdns.TypeSOA || r.Header().Rrtype == mdns.TypeNS) {
				continue
			}
			t.remove(r)
		}
	case mdns.ClassNONE:
		if h.Rrtype == mdns.TypeSOA {
			return
		}
		if apex && h.Rrtype == mdns.TypeNS && len(t.matching(owner, mdns.TypeNS)) <= 1 {
			return // the last apex NS stays
		}
		probe := mdns.Copy(rr)
		probe.Header().Class, probe.Header().Name = mdns.ClassINET, owner
		t.remove(probe)
	}
}

// addChecked adds rr under the CNAME and SOA rules.
func (t *tx) addChecked(rr mdns.RR, apex bool) {
	typ := rr.Header().Rrtype
	others := t.matching(rr.Header().Name, mdns.TypeANY)
	for _, o := range others {
		ot := o.Header().Rrtype
		if typ == mdns.TypeCNAME && ot != mdns.TypeCNAME && !dnssecType(ot) {
			return // §3.4.2.2: a CNAME beside other data is ignored
		}
		if typ != mdns.TypeCNAME && !dnssecType(typ) && ot == mdns.TypeCNAME {
			return // and other data beside a CNAME
		}
	}
	if typ == mdns.TypeSOA {
		cur := t.matching(rr.Header().Name, mdns.TypeSOA)
		if !apex || len(cur) == 0 || !serialAbove(rr.(*mdns.SOA).Serial, cur[0].(*mdns.SOA).Serial) {
			return
		}
		t.remove(cur[0])
		t.rrs = append([]mdns.RR{rr}, t.rrs...)
		t.add = append(t.add, rr)
		return
	}
	if typ == mdns.TypeCNAME {
		for _, o := range t.matching(rr.Header().Name, mdns.TypeCNAME) {
			t.remove(o) // one CNAME: the new one replaces it
		}
	}
	t.addRR(rr)
}

// addRR adds rr, replacing a duplicate, and gives its RRset rr's TTL.
func (t *tx) addRR(rr mdns.RR) {
	for _, o := range t.matching(rr.Header().Name, rr.Header().Rrtype) {
		if mdns.IsDuplicate(o, rr) || o.Header().Ttl != rr.Header().Ttl {
			t.remove(o)
			if !mdns.IsDuplicate(o, rr) {
				c := mdns.Copy(o)
				c.Header().Ttl = rr.Header().Ttl
				t.rrs = append(t.rrs, c)
				t.add = append(t.add, c)
			}
		}
	}
	t.rrs = append(t.rrs, rr)
	t.add = append(t.add, rr)
}

// remove deletes the record with rr's owner, type and data, if present.
func (t *tx) remove(rr mdns.RR) {
	for i, r := range t.rrs {
		if mdns.IsDuplicate(r, rr) {
			t.del = append(t.del, r)
			t.rrs = append(t.rrs[:i:i], t.rrs[i+1:]...)
			return
		}
	}
}

// matching returns the records of owner and type (TypeANY: all) in the
// transaction's copy.
func (t *tx) matching(owner string, typ uint16) []mdns.RR {
	var out []mdns.RR
	for _, r := range t.rrs {
		if r.Header().Name == owner && (typ == mdns.TypeANY || r.Header().Rrtype == typ) {
			out = append(out, r)
		}
	}
	return out
}

// commit installs the copy when something changed: the serial rises by
// one unless the update raised it, and the change is journalled.
func (t *tx) commit() {
	if len(t.del) == 0 && len(t.add) == 0 {
		return
	}
	from := t.z.serial()
	soa := t.rrs[0].(*mdns.SOA)
	if soa.Serial == from {
		next := mdns.Copy(soa).(*mdns.SOA)
		next.Serial = from + 1
		if next.Serial == 0 {
			next.Serial = 1
		}
		t.rrs[0] = next
	}
	t.z.rrs = t.rrs
	t.z.journal = append(t.z.journal, change{from: from, to: t.z.serial(), del: t.del, add: t.add})
}

// dnssecType: records that may stand beside a CNAME.
func dnssecType(t uint16) bool {
	return t == mdns.TypeRRSIG || t == mdns.TypeNSEC || t == mdns.TypeNSEC3
}

// serialAbove is RFC 1982 serial arithmetic: a > b.
func serialAbove(a, b uint32) bool {
	return a != b && (a-b) < 1<<31
}
