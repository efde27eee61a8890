package rfc2136

import (
	"context"
	"fmt"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// CreateRRSet adds an RRSet that must not exist yet. Labels are
// invalid_input: the protocol keeps none.
func (p *Provider) CreateRRSet(ctx context.Context, zone string, req dns.CreateRRSetRequest) (dns.RRSet, *dns.Action, error) {
	if len(req.Labels) > 0 {
		return dns.RRSet{}, nil, invalidInput("labels", "an RFC 2136 server keeps no labels")
	}
	var out dns.RRSet
	err := p.change(ctx, zone, req.Name, req.Type, func(u *update) error {
		if u.cur != nil {
			return &dns.Error{Status: 409, Code: "uniqueness_error", Message: "the rrset already exists"}
		}
		rrs, err := u.parse(req.Records, p.ttl(req.TTL, nil))
		if err != nil {
			return err
		}
		if err := u.cnameRules(len(rrs)); err != nil {
			return err
		}
		u.asRead()
		u.add(rrs...)
		out = viewOf(u, rrs)
		return nil
	})
	return out, nil, err
}

// ttl is the TTL to write: the one given, else the RRSet's, else the
// default.
func (p *Provider) ttl(given *int, cur *rrset) uint32 {
	switch {
	case given != nil:
		return uint32(*given)
	case cur != nil:
		return cur.ttl
	}
	return uint32(p.opts.DefaultTTL)
}

// viewOf is the RRSet as the update makes it.
func viewOf(u *update, rrs []mdns.RR) dns.RRSet {
	st := &zoneState{zone: u.zc, sets: map[setKey]*rrset{u.key: {ttl: rrs[0].Header().Ttl, rrs: rrs}}}
	return st.view(u.key)
}

// parseExisting requires the RRSet to exist and reads the values as its
// records, at its TTL.
func (u *update) parseExisting(records []dns.Record) ([]mdns.RR, error) {
	if u.cur == nil {
		return nil, notFound()
	}
	return u.parse(records, u.cur.ttl)
}

// DeleteRRSet deletes an RRSet as it was read. The apex NS RRSet is
// invalid_input: servers never delete it.
func (p *Provider) DeleteRRSet(ctx context.Context, zone, name, typ string) (*dns.Action, error) {
	return nil, p.change(ctx, zone, name, typ, func(u *update) error {
		switch {
		case u.cur == nil:
			return notFound()
		case u.apexNS():
			return invalidInput("name", "the zone's apex NS records cannot be deleted")
		}
		u.asRead()
		u.delSet()
		return nil
	})
}

// SetRecords replaces the records of an existing RRSet, keeping its TTL:
// the records read and not given are deleted, those given and not read
// added.
func (p *Provider) SetRecords(ctx context.Context, zone, name, typ string, records []dns.Record) (*dns.Action, error) {
	return nil, p.change(ctx, zone, name, typ, func(u *update) error {
		rrs, err := u.parseExisting(records)
		if err != nil {
			return err
		}
		if err := u.cnameRules(len(rrs)); err != nil {
			return err
		}
		u.asRead()
		for _, old := range u.cur.rrs {
			if !(&rrset{rrs: rrs}).holds(old) {
				u.del(old)
			}
		}
		for _, rr := range rrs {
			if !u.cur.holds(rr) {
				u.add(rr)
			}
		}
		u.noop = len(u.msg.Ns) == 0
		return nil
	})
}

// AddRecords adds records, creating the RRSet when it is missing; a value
// already present is left as it is. A ttl other than the RRSet's applies
// to all its records.
func (p *Provider) AddRecords(ctx context.Context, zone, name, typ string, records []dns.Record, ttl *int) (*dns.Action, error) {
	return nil, p.change(ctx, zone, name, typ, func(u *update) error {
		want := p.ttl(ttl, u.cur)
		rrs, err := u.parse(records, want)
		if err != nil {
			return err
		}
		var fresh []mdns.RR
		for _, rr := range rrs {
			if !u.cur.holds(rr) {
				fresh = append(fresh, rr)
			}
		}
		if err := u.cnameRules(len(fresh) + len(u.cur.records())); err != nil {
			return err
		}
		u.asRead()
		if u.cur != nil && want != u.cur.ttl {
			u.retime(want, fresh)
			return nil
		}
		u.add(fresh...)
		u.noop = len(fresh) == 0
		return nil
	})
}

// RemoveRecords removes records by value; every value must be in the
// RRSet. An RRSet left empty is deleted, except the apex NS (refused).
func (p *Provider) RemoveRecords(ctx context.Context, zone, name, typ string, records []dns.Record) (*dns.Action, error) {
	return nil, p.change(ctx, zone, name, typ, func(u *update) error {
		rrs, err := u.parseExisting(records)
		if err != nil {
			return err
		}
		for i, rr := range rrs {
			if !u.cur.holds(rr) {
				return invalidInput(fmt.Sprintf("records[%d].value", i), "the RRSet holds no such record")
			}
		}
		if u.apexNS() && len(rrs) == len(u.cur.rrs) {
			return invalidInput("records", "the zone's apex NS records cannot all be removed")
		}
		u.asRead()
		for _, rr := range rrs {
			u.del(rr)
		}
		return nil
	})
}

// ChangeRRSetTTL gives every record of the RRSet the TTL. A nil TTL is
// invalid_input: a zone here has no default to return to.
func (p *Provider) ChangeRRSetTTL(ctx context.Context, zone, name, typ string, ttl *int) (*dns.Action, error) {
	if ttl == nil {
		return nil, invalidInput("ttl", "an RFC 2136 server has no zone default TTL: give the TTL in seconds")
	}
	return nil, p.change(ctx, zone, name, typ, func(u *update) error {
		if u.cur == nil {
			return notFound()
		}
		u.asRead()
		u.retime(uint32(*ttl), nil)
		u.noop = uint32(*ttl) == u.cur.ttl
		return nil
	})
}
