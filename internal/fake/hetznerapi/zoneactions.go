package hetznerapi

// requireMode answers 422 incorrect_zone_mode unless z is in mode.
func requireMode(z *zone, mode string) *apiError {
	if z.Mode != mode {
		return wrongMode(z.Mode)
	}
	return nil
}

func (s *Server) changePrimaryNameservers(c *call, z *zone) (int, any, *apiError) {
	if e := requireMode(z, ModeSecondary); e != nil {
		return 0, nil, e
	}
	var req struct {
		PrimaryNameservers []PrimaryNameserver `json:"primary_nameservers"`
	}
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	ns, e := checkNameservers(req.PrimaryNameservers)
	if e != nil {
		return 0, nil, e
	}
	if e := s.checkLocked(z.ID); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("change_primary_nameservers", z.ID)
	if apply {
		z.PrimaryNameservers = ns
	}
	return 201, actionAnswer(a), nil
}

func (s *Server) changeZoneProtection(c *call, z *zone) (int, any, *apiError) {
	var req struct {
		Delete *bool `json:"delete"`
	}
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	if e := s.checkLocked(z.ID); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("change_protection", z.ID)
	if apply && req.Delete != nil {
		z.Protection.Delete = *req.Delete
	}
	return 201, actionAnswer(a), nil
}

func (s *Server) changeZoneTTL(c *call, z *zone) (int, any, *apiError) {
	if e := requireMode(z, ModePrimary); e != nil {
		return 0, nil, e
	}
	var req struct {
		TTL *int `json:"ttl"`
	}
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	if req.TTL == nil {
		return 0, nil, invalidField("ttl", "is required")
	}
	if e := checkTTL("ttl", *req.TTL); e != nil {
		return 0, nil, e
	}
	if e := s.checkLocked(z.ID); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("change_ttl", z.ID)
	if apply {
		z.TTL = *req.TTL
		s.bumpSerial(z)
	}
	return 201, actionAnswer(a), nil
}

// importZonefile replaces all RRSets; it refuses while any RRSet is
// change-protected (reference §5).
func (s *Server) importZonefile(c *call, z *zone) (int, any, *apiError) {
	if e := requireMode(z, ModePrimary); e != nil {
		return 0, nil, e
	}
	var req struct {
		Zonefile *string `json:"zonefile"`
	}
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	if req.Zonefile == nil || *req.Zonefile == "" {
		return 0, nil, invalidField("zonefile", "is required")
	}
	p, err := ParseZonefile(*req.Zonefile, z.Name, z.TTL)
	if err != nil {
		return 0, nil, invalidField("zonefile", err.Error())
	}
	for _, rs := range z.rrsets {
		if rs.Protection.Change {
			return 0, nil, newError(CodeProtected, "rrset "+rs.ID+" is change protected")
		}
	}
	if e := s.checkLocked(z.ID); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("import_zonefile", z.ID)
	if apply {
		s.applyImport(z, p)
	}
	return 201, actionAnswer(a), nil
}

func exportZonefile(s *Server, c *call) (int, any, *apiError) {
	z, e := s.zoneParam(c)
	if e != nil {
		return 0, nil, e
	}
	if e := requireMode(z, ModePrimary); e != nil {
		return 0, nil, e
	}
	return 200, map[string]any{"zonefile": ExportZonefile(z.Name, z.TTL, s.rrsetList(z))}, nil
}

// rrsetList snapshots z's RRSets in id order.
func (s *Server) rrsetList(z *zone) []RRSet {
	out := make([]RRSet, 0, len(z.rrsets))
	for _, id := range sortedKeys(z.rrsets) {
		out = append(out, z.rrsets[id].snapshot())
	}
	return out
}
