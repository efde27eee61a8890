package hetznerapi

import (
	"cmp"
	"slices"
)

var rrsetSortFields = []string{"id", "name", "created"}

// primaryZone resolves {z} and requires a primary zone.
func (s *Server) primaryZone(c *call) (*zone, *apiError) {
	z, e := s.zoneParam(c)
	if e != nil {
		return nil, e
	}
	return z, requireMode(z, ModePrimary)
}

// rrsetParam resolves {n}/{t} verbatim: "%40" is not "@" (reference §6).
func rrsetParam(c *call, z *zone) (*rrset, *apiError) {
	rs := z.rrsets[rrsetID(c.params["n"], c.params["t"])]
	if rs == nil {
		return nil, notFound("rrset")
	}
	return rs, nil
}

func listRRSets(s *Server, c *call) (int, any, *apiError) {
	z, e := s.primaryZone(c)
	if e != nil {
		return 0, nil, e
	}
	types := c.q["type"]
	for _, t := range types {
		if e := checkType(t); e != nil {
			return 0, nil, e
		}
	}
	sel, e := selectorParam(c)
	if e != nil {
		return 0, nil, e
	}
	keys, e := parseSort(c, rrsetSortFields)
	if e != nil {
		return 0, nil, e
	}
	name := c.q.Get("name")
	var list []*rrset
	for _, rs := range z.rrsets {
		if (name != "" && rs.Name != name) || (len(types) > 0 && !slices.Contains(types, rs.Type)) ||
			!sel.Matches(rs.Labels) {
			continue
		}
		list = append(list, rs)
	}
	sortItems(list, keys, compareRRSet, "id")
	page, meta, e := paginate(s, c, list, maxPerPageRRSet)
	if e != nil {
		return 0, nil, e
	}
	out := make([]RRSet, len(page))
	for i, rs := range page {
		out[i] = rs.snapshot()
	}
	return 200, map[string]any{"rrsets": out, "meta": meta}, nil
}

func compareRRSet(a, b *rrset, field string) int {
	switch field {
	case "name":
		return cmp.Compare(a.Name, b.Name)
	case "created":
		return cmp.Compare(a.seq, b.seq)
	}
	return cmp.Compare(a.ID, b.ID)
}

func getRRSet(s *Server, c *call) (int, any, *apiError) {
	z, e := s.primaryZone(c)
	if e != nil {
		return 0, nil, e
	}
	rs, e := rrsetParam(c, z)
	if e != nil {
		return 0, nil, e
	}
	return 200, map[string]any{"rrset": rs.snapshot()}, nil
}

func createRRSet(s *Server, c *call) (int, any, *apiError) {
	z, e := s.primaryZone(c)
	if e != nil {
		return 0, nil, e
	}
	var req rrsetInput
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	if e := checkRRSetInput(req, z.Name); e != nil {
		return 0, nil, e
	}
	id := rrsetID(req.Name, req.Type)
	if z.rrsets[id] != nil {
		return 0, nil, notUnique("name", "rrset "+id+" already exists")
	}
	if e := s.checkLocked(z.ID); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("create_rrset", z.ID)
	out := RRSet{ID: id, Name: req.Name, Type: req.Type, TTL: cloneTTL(req.TTL), Labels: cloneLabels(req.Labels),
		Records: slices.Clone(req.Records), Zone: z.ID}
	if apply {
		rs := s.putRRSet(z, req.Name, req.Type, req.TTL, req.Records)
		rs.Labels = cloneLabels(req.Labels)
		s.bumpSerial(z)
		out = rs.snapshot()
	}
	return 201, map[string]any{"rrset": out, "action": a.snapshot()}, nil
}

// updateRRSet replaces the labels; change protection does not block it
// (reference §5 [?], doc.go).
func updateRRSet(s *Server, c *call) (int, any, *apiError) {
	z, e := s.primaryZone(c)
	if e != nil {
		return 0, nil, e
	}
	rs, e := rrsetParam(c, z)
	if e != nil {
		return 0, nil, e
	}
	if e := c.replaceLabels(&rs.Labels); e != nil {
		return 0, nil, e
	}
	return 200, map[string]any{"rrset": rs.snapshot()}, nil
}

func deleteRRSet(s *Server, c *call) (int, any, *apiError) {
	z, e := s.primaryZone(c)
	if e != nil {
		return 0, nil, e
	}
	rs, e := rrsetParam(c, z)
	if e != nil {
		return 0, nil, e
	}
	if e := s.checkMutable(z, rs); e != nil {
		return 0, nil, e
	}
	switch rs.ID {
	case "@/SOA":
		return 0, nil, invalidField("type", "the SOA record cannot be deleted")
	case "@/NS":
		return 0, nil, errHetznerNS()
	}
	a, apply := s.begin("delete_rrset", z.ID)
	if apply {
		delete(z.rrsets, rs.ID)
		s.bumpSerial(z)
	}
	return 201, actionAnswer(a), nil
}

// checkMutable refuses changes of a change-protected RRSet (423 protected)
// and, if scripted, of a zone with a running action (423 locked).
func (s *Server) checkMutable(z *zone, rs *rrset) *apiError {
	if rs != nil && rs.Protection.Change {
		return newError(CodeProtected, "rrset "+rs.ID+" is change protected")
	}
	return s.checkLocked(z.ID)
}

func errHetznerNS() *apiError {
	return invalidField("records", "the assigned Hetzner nameservers cannot be removed")
}

// keepsHetznerNS reports whether recs still hold every assigned nameserver.
func keepsHetznerNS(recs []Record) bool {
	for _, ns := range HetznerNameservers {
		if !slices.ContainsFunc(recs, func(r Record) bool { return r.Value == ns }) {
			return false
		}
	}
	return true
}
