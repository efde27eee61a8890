package rfc2136

import (
	"context"
	"fmt"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// update is one RRSet change being built: the zone and RRSet as just read,
// and the UPDATE message.
type update struct {
	zc    *zoneConf
	st    *zoneState
	key   setKey
	typ   string
	owner string
	cur   *rrset // nil: the RRSet does not exist
	msg   *mdns.Msg
	noop  bool
}

// change reads the zone, lets plan build the update from the RRSet as
// read, and sends it: one UPDATE message, applied whole or not at all.
func (p *Provider) change(ctx context.Context, zone, name, typ string, plan func(u *update) error) error {
	t, ok := typeOf(typ)
	switch {
	case !ok:
		return invalidInput("type", "not a record type the tools manage")
	case t == mdns.TypeSOA:
		return invalidInput("type", "the server manages the SOA record; it cannot be changed here")
	}
	zc, st, err := p.read(ctx, zone)
	if err != nil {
		return err
	}
	if p.afterRead != nil {
		p.afterRead()
	}
	name = strings.ToLower(name)
	u := &update{zc: zc, st: st, key: setKey{name: name, typ: t}, typ: typ, owner: absolute(name, zc.origin)}
	if _, ok := mdns.IsDomainName(u.owner); !ok {
		return invalidInput("name", "not a domain name")
	}
	u.cur = st.sets[u.key]
	u.msg = new(mdns.Msg)
	u.msg.SetUpdate(zc.origin)
	if err := plan(u); err != nil || u.noop {
		return err
	}
	return p.send(ctx, u.msg)
}

// parse reads the tools' values as records of the RRSet with ttl; values
// must be distinct.
func (u *update) parse(recs []dns.Record, ttl uint32) ([]mdns.RR, error) {
	out := make([]mdns.RR, 0, len(recs))
	for i, r := range recs {
		rr, err := zonefile.Value(u.zc.origin, u.typ, r.Value)
		if err != nil {
			return nil, invalidInput(fmt.Sprintf("records[%d].value", i), err.Error())
		}
		if r.Comment != "" {
			return nil, invalidInput(fmt.Sprintf("records[%d].comment", i), "an RFC 2136 server keeps no comments")
		}
		rr.Header().Name, rr.Header().Ttl = u.owner, ttl
		if slices.ContainsFunc(out, func(o mdns.RR) bool { return mdns.IsDuplicate(o, rr) }) {
			return nil, invalidInput(fmt.Sprintf("records[%d].value", i), "the value is given twice")
		}
		out = append(out, rr)
	}
	return out, nil
}

// asRead adds the prerequisite that the RRSet is exactly as read: its
// records, no more and no fewer (RFC 2136 §2.4.2), or that it does not
// exist (§2.4.3).
func (u *update) asRead() {
	if u.cur == nil {
		u.msg.Answer = append(u.msg.Answer, &mdns.ANY{Hdr: mdns.RR_Header{Name: u.owner, Rrtype: u.key.typ, Class: mdns.ClassNONE}})
		return
	}
	for _, rr := range u.cur.rrs {
		c := mdns.Copy(rr)
		c.Header().Ttl, c.Header().Class = 0, mdns.ClassINET
		u.msg.Answer = append(u.msg.Answer, c)
	}
}

// cnameRules refuses what a server would silently ignore (RFC 2136
// §3.4.2.2), and adds the prerequisites that keep it so: a new CNAME needs
// a name in use by nothing (§2.4.5), other data a name without a CNAME.
func (u *update) cnameRules(adding int) error {
	other, cname := false, false
	for k := range u.st.sets {
		if k.name == u.key.name && k.typ != u.key.typ && !dnssecType(k.typ) {
			other = true
			cname = cname || k.typ == mdns.TypeCNAME
		}
	}
	if u.key.typ != mdns.TypeCNAME {
		if cname {
			return invalidInput("name", "the name holds a CNAME, which stands alone")
		}
		u.msg.Answer = append(u.msg.Answer, &mdns.ANY{Hdr: mdns.RR_Header{Name: u.owner, Rrtype: mdns.TypeCNAME, Class: mdns.ClassNONE}})
		return nil
	}
	switch {
	case u.key.name == "@":
		return invalidInput("name", "a CNAME cannot stand at the zone's apex")
	case other:
		return invalidInput("name", "the name holds other records; a CNAME stands alone")
	case adding > 1:
		return invalidInput("records", "a CNAME has exactly one value")
	case u.cur == nil:
		u.msg.Answer = append(u.msg.Answer, &mdns.ANY{Hdr: mdns.RR_Header{Name: u.owner, Rrtype: mdns.TypeANY, Class: mdns.ClassNONE}})
	}
	return nil
}

func dnssecType(t uint16) bool {
	return t == mdns.TypeRRSIG || t == mdns.TypeNSEC || t == mdns.TypeNSEC3
}

// apexNS: the RRSet is the apex NS, which servers never delete whole.
func (u *update) apexNS() bool { return u.key.name == "@" && u.key.typ == mdns.TypeNS }

// add, del and delSet append update operations (RFC 2136 §2.5).
func (u *update) add(rrs ...mdns.RR) { u.msg.Ns = append(u.msg.Ns, rrs...) }

func (u *update) del(rr mdns.RR) {
	c := mdns.Copy(rr)
	c.Header().Ttl, c.Header().Class = 0, mdns.ClassNONE
	u.msg.Ns = append(u.msg.Ns, c)
}

func (u *update) delSet() {
	u.msg.Ns = append(u.msg.Ns, &mdns.ANY{Hdr: mdns.RR_Header{Name: u.owner, Rrtype: u.key.typ, Class: mdns.ClassANY}})
}

// retime gives every record of the RRSet (those read and those added) the
// TTL ttl: each record read is deleted and every record added again. Record
// by record, because servers never delete the apex NS RRSet whole, and a
// record added again beside its duplicate keeps its old TTL on some (Knot)
// and changes it on others (BIND); deleted first, it is new to all of them.
func (u *update) retime(ttl uint32, added []mdns.RR) {
	for _, rr := range u.cur.records() {
		u.del(rr)
	}
	for _, rr := range append(slices.Clone(u.cur.records()), added...) {
		c := mdns.Copy(rr)
		c.Header().Ttl, c.Header().Class = ttl, mdns.ClassINET
		u.add(c)
	}
}

// holds reports whether the RRSet as read has a record with rr's data.
func (s *rrset) holds(rr mdns.RR) bool {
	return slices.ContainsFunc(s.records(), func(o mdns.RR) bool { return mdns.IsDuplicate(o, rr) })
}

func notFound() error {
	return &dns.Error{Status: 404, Code: "not_found", Message: "rrset not found"}
}

// send sends the update and maps the server's answer.
func (p *Provider) send(ctx context.Context, m *mdns.Msg) error {
	in, err := p.exchange(ctx, m)
	if err != nil {
		return err
	}
	rc := in.Rcode
	msg := fmt.Sprintf("the server answered %s to the update", rcodeName(rc))
	switch rc {
	case mdns.RcodeSuccess:
		return nil
	case mdns.RcodeNXRrset, mdns.RcodeYXRrset, mdns.RcodeNameError, mdns.RcodeYXDomain:
		return &dns.Error{Status: 409, Code: "rrset_changed", Message: msg + ": a prerequisite failed, so the records are no longer as they were read, and nothing was changed"}
	case mdns.RcodeRefused:
		return &dns.Error{Status: 403, Code: "update_refused", Message: msg}
	case mdns.RcodeNotAuth:
		return &dns.Error{Status: 422, Code: "not_authoritative", Message: msg}
	case mdns.RcodeFormatError, mdns.RcodeNotZone:
		return &dns.Error{Status: 422, Code: "invalid_input", Message: msg}
	}
	return &dns.Error{Status: 502, Code: "upstream_error", Message: msg}
}
