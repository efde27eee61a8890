package hetznerapi

import (
	"fmt"
	"slices"
)

type recordsReq struct {
	Records []Record `json:"records"`
	TTL     *int     `json:"ttl"`
}

// rrsetAction dispatches POST /zones/{z}/rrsets/{n}/{t}/actions/{a}.
func rrsetAction(s *Server, c *call) (int, any, *apiError) {
	z, e := s.primaryZone(c)
	if e != nil {
		return 0, nil, e
	}
	switch c.params["a"] {
	case "add_records":
		return s.addRecords(c, z)
	case "remove_records":
		return s.removeRecords(c, z)
	case "set_records":
		return s.setRecords(c, z)
	case "update_records":
		return s.updateRecords(c, z)
	case "change_ttl":
		return s.changeRRSetTTL(c, z)
	case "change_protection":
		return s.changeRRSetProtection(c, z)
	}
	return 0, nil, notFound(fmt.Sprintf("action %q", c.params["a"]))
}

// addRecords appends records and creates the RRSet when missing. A value
// already present is left as is; a ttl also changes an existing RRSet's TTL
// (reference §5 [?], doc.go).
func (s *Server) addRecords(c *call, z *zone) (int, any, *apiError) {
	name, typ := c.params["n"], c.params["t"]
	var req recordsReq
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	rs := z.rrsets[rrsetID(name, typ)]
	if typ == "SOA" {
		return 0, nil, invalidField("type", "the SOA RRSet holds exactly one record; use set_records")
	}
	if e := checkRRSetInput(rrsetInput{Name: name, Type: typ, TTL: req.TTL, Records: req.Records}, z.Name); e != nil {
		return 0, nil, e
	}
	if e := s.checkMutable(z, rs); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("add_rrset_records", z.ID)
	if !apply {
		return 201, actionAnswer(a), nil
	}
	if rs == nil {
		s.putRRSet(z, name, typ, req.TTL, req.Records)
	} else {
		rs.Records = mergeRecords(rs.Records, req.Records)
		if req.TTL != nil {
			rs.TTL = cloneTTL(req.TTL)
		}
	}
	s.bumpSerial(z)
	return 201, actionAnswer(a), nil
}

// removeRecords removes records by value; absent values are ignored and an
// emptied RRSet is deleted (reference §5 [?], doc.go).
func (s *Server) removeRecords(c *call, z *zone) (int, any, *apiError) {
	rs, req, e := s.existingWithRecords(c, z)
	if e != nil {
		return 0, nil, e
	}
	left := slices.DeleteFunc(slices.Clone(rs.Records), func(r Record) bool {
		return slices.ContainsFunc(req.Records, func(x Record) bool { return x.Value == r.Value })
	})
	switch {
	case rs.ID == "@/NS" && !keepsHetznerNS(left):
		return 0, nil, errHetznerNS()
	case rs.ID == "@/SOA" && len(left) == 0:
		return 0, nil, invalidField("records", "the SOA record cannot be removed")
	}
	a, apply := s.begin("remove_rrset_records", z.ID)
	if apply {
		rs.Records = left
		if len(left) == 0 {
			delete(z.rrsets, rs.ID)
		}
		s.bumpSerial(z)
	}
	return 201, actionAnswer(a), nil
}

// setRecords replaces all records of an existing RRSet. An SOA's serial is
// replaced by the managed one.
func (s *Server) setRecords(c *call, z *zone) (int, any, *apiError) {
	rs, req, e := s.existingWithRecords(c, z)
	if e != nil {
		return 0, nil, e
	}
	if e := checkRecords(req.Records, rs.Type, z.Name); e != nil {
		return 0, nil, e
	}
	switch {
	case rs.ID == "@/NS" && !keepsHetznerNS(req.Records):
		return 0, nil, errHetznerNS()
	case rs.ID == "@/SOA" && len(req.Records) != 1:
		return 0, nil, invalidField("records", "the SOA RRSet holds exactly one record")
	}
	a, apply := s.begin("set_rrset_records", z.ID)
	if apply {
		rs.Records = slices.Clone(req.Records)
		s.bumpSerial(z)
	}
	return 201, actionAnswer(a), nil
}

// updateRecords changes only comments of existing values; it is the one
// action answered with 200 (reference §2.2).
func (s *Server) updateRecords(c *call, z *zone) (int, any, *apiError) {
	rs, req, e := s.existingWithRecords(c, z)
	if e != nil {
		return 0, nil, e
	}
	for _, r := range req.Records {
		if !slices.ContainsFunc(rs.Records, func(x Record) bool { return x.Value == r.Value }) {
			return 0, nil, invalidField("records", "no record with value "+quoteShort(r.Value))
		}
	}
	a, apply := s.begin("update_rrset_records", z.ID)
	if apply {
		for _, r := range req.Records {
			i := slices.IndexFunc(rs.Records, func(x Record) bool { return x.Value == r.Value })
			rs.Records[i].Comment = r.Comment
		}
	}
	return 200, actionAnswer(a), nil
}

// existingWithRecords resolves an existing, mutable RRSet and decodes a
// non-empty records body without duplicate values.
func (s *Server) existingWithRecords(c *call, z *zone) (*rrset, *recordsReq, *apiError) {
	rs, e := rrsetParam(c, z)
	if e != nil {
		return nil, nil, e
	}
	var req recordsReq
	if e := c.decode(&req); e != nil {
		return nil, nil, e
	}
	if len(req.Records) == 0 {
		return nil, nil, invalidField("records", "must not be empty")
	}
	seen := map[string]bool{}
	for _, r := range req.Records {
		if seen[r.Value] {
			return nil, nil, invalidField("records", "duplicate value "+quoteShort(r.Value))
		}
		seen[r.Value] = true
	}
	if e := s.checkMutable(z, rs); e != nil {
		return nil, nil, e
	}
	return rs, &req, nil
}

// changeRRSetTTL sets the TTL; null returns the RRSet to the zone default.
func (s *Server) changeRRSetTTL(c *call, z *zone) (int, any, *apiError) {
	rs, e := rrsetParam(c, z)
	if e != nil {
		return 0, nil, e
	}
	var req struct {
		TTL *int `json:"ttl"`
	}
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	if req.TTL != nil {
		if e := checkTTL("ttl", *req.TTL); e != nil {
			return 0, nil, e
		}
	}
	if e := s.checkMutable(z, rs); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("change_rrset_ttl", z.ID)
	if apply {
		rs.TTL = cloneTTL(req.TTL)
		s.bumpSerial(z)
	}
	return 201, actionAnswer(a), nil
}

// changeRRSetProtection toggles change protection; always allowed.
func (s *Server) changeRRSetProtection(c *call, z *zone) (int, any, *apiError) {
	rs, e := rrsetParam(c, z)
	if e != nil {
		return 0, nil, e
	}
	var req struct {
		Change *bool `json:"change"`
	}
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	if e := s.checkLocked(z.ID); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("change_rrset_protection", z.ID)
	if apply && req.Change != nil {
		rs.Protection.Change = *req.Change
	}
	return 201, actionAnswer(a), nil
}
