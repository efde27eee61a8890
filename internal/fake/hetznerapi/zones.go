package hetznerapi

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

const (
	defaultZoneTTL = 3600
	soaTail        = " 86400 10800 3600000 3600"
	soaPrefix      = "hydrogen.ns.hetzner.com. dns.hetzner.com. "
)

var zoneSortFields = []string{"id", "name", "created"}

// rrsetInput is an RRSet in a request body.
type rrsetInput struct {
	Name    string            `json:"name"`
	Type    string            `json:"type"`
	TTL     *int              `json:"ttl"`
	Labels  map[string]string `json:"labels"`
	Records []Record          `json:"records"`
}

type createZoneReq struct {
	Name               string              `json:"name"`
	Mode               string              `json:"mode"`
	TTL                *int                `json:"ttl"`
	Labels             map[string]string   `json:"labels"`
	PrimaryNameservers []PrimaryNameserver `json:"primary_nameservers"`
	RRSets             []rrsetInput        `json:"rrsets"`
	Zonefile           *string             `json:"zonefile"`
}

// zoneParam resolves {z}: a numeric id or the exact name.
func (s *Server) zoneParam(c *call) (*zone, *apiError) {
	z := s.lookupZone(c.params["z"])
	if z == nil {
		return nil, notFound("zone")
	}
	return z, nil
}

func (s *Server) lookupZone(key string) *zone {
	if id, err := strconv.ParseInt(key, 10, 64); err == nil {
		return s.zones[id]
	}
	for _, z := range s.zones {
		if z.Name == key {
			return z
		}
	}
	return nil
}

func (s *Server) zoneByName(name string) *zone {
	for _, z := range s.zones {
		if z.Name == name {
			return z
		}
	}
	return nil
}

// snapshot renders z with its derived fields.
func (s *Server) snapshot(z *zone) Zone {
	c := z.Zone
	c.Labels = cloneLabels(z.Labels)
	c.PrimaryNameservers = slices.Clone(z.PrimaryNameservers)
	if c.PrimaryNameservers == nil {
		c.PrimaryNameservers = []PrimaryNameserver{}
	}
	c.RecordCount = z.recordCount()
	c.Status = "ok"
	if s.running(z.ID) {
		c.Status = "updating"
	}
	ans := z.AuthoritativeNameservers
	ans.Assigned = slices.Clone(ans.Assigned)
	ans.Delegated = slices.Clone(ans.Delegated)
	if ans.Delegated == nil {
		ans.Delegated = []string{}
	}
	c.AuthoritativeNameservers = ans
	return c
}

// newZone builds a zone; primary zones get the SOA and the three Hetzner NS
// records (reference §5).
func (s *Server) newZone(name, mode string, ttl int, labels map[string]string, ns []PrimaryNameserver) *zone {
	s.nextZone++
	z := &zone{Zone: Zone{ID: s.nextZone, Name: name, Created: s.now(), Mode: mode, TTL: ttl,
		Labels: cloneLabels(labels), PrimaryNameservers: ns, Registrar: "unknown",
		AuthoritativeNameservers: AuthoritativeNameservers{Assigned: slices.Clone(HetznerNameservers),
			DelegationStatus: "unknown"}}, rrsets: map[string]*rrset{}}
	if mode == ModePrimary {
		s.bumpSerial(z)
		s.putRRSet(z, "@", "SOA", nil, []Record{{Value: soaPrefix + strconv.FormatUint(uint64(z.serial), 10) + soaTail}})
		var nsRecs []Record
		for _, n := range HetznerNameservers {
			nsRecs = append(nsRecs, Record{Value: n})
		}
		s.putRRSet(z, "@", "NS", nil, nsRecs)
	}
	return z
}

// putRRSet creates or replaces an RRSet's records, keeping labels and
// protection of an existing one.
func (s *Server) putRRSet(z *zone, name, typ string, ttl *int, recs []Record) *rrset {
	id := rrsetID(name, typ)
	rs, ok := z.rrsets[id]
	if !ok {
		s.seq++
		rs = &rrset{RRSet: RRSet{ID: id, Name: name, Type: typ, Labels: map[string]string{}, Zone: z.ID}, seq: s.seq}
		z.rrsets[id] = rs
	}
	rs.TTL = cloneTTL(ttl)
	rs.Records = slices.Clone(recs)
	return rs
}

// bumpSerial advances the SOA serial (YYYYMMDDnn) and rewrites the SOA.
func (s *Server) bumpSerial(z *zone) {
	n := s.now()
	base := uint32(n.Year()*10000+int(n.Month())*100+n.Day()) * 100
	if z.serial < base {
		z.serial = base + 1
	} else {
		z.serial++
	}
	if soa, ok := z.rrsets["@/SOA"]; ok && len(soa.Records) == 1 {
		soa.Records[0].Value = withSerial(soa.Records[0].Value, z.serial)
	}
}

func withSerial(soa string, serial uint32) string {
	f := strings.Fields(soa)
	if len(f) != 7 {
		return soa
	}
	f[2] = strconv.FormatUint(uint64(serial), 10)
	return strings.Join(f, " ")
}

func listZones(s *Server, c *call) (int, any, *apiError) {
	mode := c.q.Get("mode")
	if mode != "" && mode != ModePrimary && mode != ModeSecondary {
		return 0, nil, invalidField("mode", "must be primary or secondary")
	}
	sel, e := selectorParam(c)
	if e != nil {
		return 0, nil, e
	}
	keys, e := parseSort(c, zoneSortFields)
	if e != nil {
		return 0, nil, e
	}
	name := c.q.Get("name")
	var out []Zone
	for _, z := range s.zones {
		if (name != "" && z.Name != name) || (mode != "" && z.Mode != mode) || !sel.Matches(z.Labels) {
			continue
		}
		out = append(out, s.snapshot(z))
	}
	sortItems(out, keys, compareZone, "id")
	page, meta, e := paginate(s, c, out, maxPerPage)
	if e != nil {
		return 0, nil, e
	}
	return 200, map[string]any{"zones": page, "meta": meta}, nil
}

func compareZone(a, b Zone, field string) int {
	switch field {
	case "name":
		return cmp.Compare(a.Name, b.Name)
	case "created":
		return a.Created.Compare(b.Created)
	}
	return cmp.Compare(a.ID, b.ID)
}

func getZone(s *Server, c *call) (int, any, *apiError) {
	z, e := s.zoneParam(c)
	if e != nil {
		return 0, nil, e
	}
	return 200, map[string]any{"zone": s.snapshot(z)}, nil
}

func createZone(s *Server, c *call) (int, any, *apiError) {
	var req createZoneReq
	if e := c.decode(&req); e != nil {
		return 0, nil, e
	}
	z, e := s.buildZone(&req)
	if e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("create_zone", z.ID)
	if apply {
		s.zones[z.ID] = z
	}
	return 201, map[string]any{"zone": s.snapshot(z), "action": a.snapshot()}, nil
}

// buildZone validates a create request and builds the zone, unsaved.
func (s *Server) buildZone(req *createZoneReq) (*zone, *apiError) {
	if e := checkZoneName(req.Name); e != nil {
		return nil, e
	}
	if req.Mode != ModePrimary && req.Mode != ModeSecondary {
		return nil, invalidField("mode", "must be primary or secondary")
	}
	ttl := defaultZoneTTL
	if req.TTL != nil {
		if e := checkTTL("ttl", *req.TTL); e != nil {
			return nil, e
		}
		ttl = *req.TTL
	}
	if e := checkLabels(req.Labels); e != nil {
		return nil, e
	}
	ns, e := checkZoneModeFields(req)
	if e != nil {
		return nil, e
	}
	if s.zoneByName(req.Name) != nil {
		return nil, notUnique("name", "zone name is already used")
	}
	z := s.newZone(req.Name, req.Mode, ttl, req.Labels, ns)
	if req.Zonefile != nil {
		return z, s.importInto(z, *req.Zonefile)
	}
	return z, s.addInitialRRSets(z, req.RRSets)
}

// checkZoneModeFields enforces which create fields belong to which mode.
func checkZoneModeFields(req *createZoneReq) ([]PrimaryNameserver, *apiError) {
	if req.Mode == ModeSecondary {
		switch {
		case len(req.RRSets) > 0:
			return nil, invalidField("rrsets", "not allowed for secondary zones")
		case req.Zonefile != nil:
			return nil, invalidField("zonefile", "not allowed for secondary zones")
		}
		return checkNameservers(req.PrimaryNameservers)
	}
	switch {
	case req.PrimaryNameservers != nil:
		return nil, invalidField("primary_nameservers", "only allowed for secondary zones")
	case req.Zonefile != nil && req.RRSets != nil:
		return nil, invalidField("zonefile", "cannot be combined with rrsets")
	}
	return nil, nil
}

// addInitialRRSets adds the rrsets of a create request; an @/NS entry adds
// to the Hetzner NS records, an @/SOA entry is refused.
func (s *Server) addInitialRRSets(z *zone, in []rrsetInput) *apiError {
	seen := map[string]bool{}
	for _, r := range in {
		if e := checkRRSetInput(r, z.Name); e != nil {
			return e
		}
		id := rrsetID(r.Name, r.Type)
		if seen[id] {
			return invalidField("rrsets", "duplicate rrset "+id)
		}
		seen[id] = true
		switch id {
		case "@/SOA":
			return invalidField("rrsets", "the SOA record is managed by Hetzner")
		case "@/NS":
			ns := z.rrsets[id]
			ns.Records = mergeRecords(ns.Records, r.Records)
			ns.TTL, ns.Labels = cloneTTL(r.TTL), cloneLabels(r.Labels)
			continue
		}
		rs := s.putRRSet(z, r.Name, r.Type, r.TTL, r.Records)
		rs.Labels = cloneLabels(r.Labels)
	}
	return nil
}

func checkRRSetInput(r rrsetInput, zoneName string) *apiError {
	if e := checkRRSetName(r.Name, zoneName); e != nil {
		return e
	}
	if e := checkType(r.Type); e != nil {
		return e
	}
	if r.TTL != nil {
		if e := checkTTL("ttl", *r.TTL); e != nil {
			return e
		}
	}
	if e := checkLabels(r.Labels); e != nil {
		return e
	}
	return checkRecords(r.Records, r.Type, zoneName)
}

// mergeRecords appends the values of add not yet in recs.
func mergeRecords(recs, add []Record) []Record {
	out := slices.Clone(recs)
	for _, r := range add {
		if !slices.ContainsFunc(out, func(x Record) bool { return x.Value == r.Value }) {
			out = append(out, r)
		}
	}
	return out
}

func updateZone(s *Server, c *call) (int, any, *apiError) {
	z, e := s.zoneParam(c)
	if e != nil {
		return 0, nil, e
	}
	if e := c.replaceLabels(&z.Labels); e != nil {
		return 0, nil, e
	}
	return 200, map[string]any{"zone": s.snapshot(z)}, nil
}

// replaceLabels reads a label update's body and, when it names labels,
// replaces *labels with them (a PUT replaces the whole map).
func (c *call) replaceLabels(labels *map[string]string) *apiError {
	var req struct {
		Labels map[string]string `json:"labels"`
	}
	if e := c.decode(&req); e != nil {
		return e
	}
	if e := checkLabels(req.Labels); e != nil {
		return e
	}
	if req.Labels != nil {
		*labels = cloneLabels(req.Labels)
	}
	return nil
}

func deleteZone(s *Server, c *call) (int, any, *apiError) {
	z, e := s.zoneParam(c)
	if e != nil {
		return 0, nil, e
	}
	if z.Protection.Delete {
		return 0, nil, newError(CodeProtected, "zone is delete protected")
	}
	if e := s.checkLocked(z.ID); e != nil {
		return 0, nil, e
	}
	a, apply := s.begin("delete_zone", z.ID)
	if apply {
		delete(s.zones, z.ID)
	}
	return 201, actionAnswer(a), nil
}

// zoneAction dispatches POST /zones/{z}/actions/{a}.
func zoneAction(s *Server, c *call) (int, any, *apiError) {
	z, e := s.zoneParam(c)
	if e != nil {
		return 0, nil, e
	}
	switch c.params["a"] {
	case "change_primary_nameservers":
		return s.changePrimaryNameservers(c, z)
	case "change_protection":
		return s.changeZoneProtection(c, z)
	case "change_ttl":
		return s.changeZoneTTL(c, z)
	case "import_zonefile":
		return s.importZonefile(c, z)
	}
	return 0, nil, notFound("action " + fmt.Sprintf("%q", c.params["a"]))
}
