package hetznerapi

import (
	"errors"
	"fmt"
	"slices"
)

// Sentinel errors of the seed helpers.
var (
	ErrNotFound = errors.New("not found")
	ErrInvalid  = errors.New("invalid seed")
	ErrExists   = errors.New("already exists")
)

// ZoneSeed describes a zone to preload. Mode defaults to primary, TTL to
// 3600; primary zones get their SOA and NS records as through the API.
type ZoneSeed struct {
	Name               string
	Mode               string
	TTL                int
	Labels             map[string]string
	DeleteProtected    bool
	PrimaryNameservers []PrimaryNameserver
	// Registrar, Delegated and DelegationStatus override the defaults
	// "unknown", [] and "unknown".
	Registrar        string
	Delegated        []string
	DelegationStatus string
}

// RRSetSeed describes an RRSet to preload; it replaces one of the same
// name and type.
type RRSetSeed struct {
	Name            string
	Type            string
	TTL             *int
	Labels          map[string]string
	Records         []Record
	ChangeProtected bool
	// Unchecked skips validation, to plant values the API would refuse
	// (hostile content beyond what the API lets through).
	Unchecked bool
}

// AddZone preloads a zone with the API's validation, without an action.
func (s *Server) AddZone(seed ZoneSeed) (Zone, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := createZoneReq{Name: seed.Name, Mode: seed.Mode, Labels: seed.Labels,
		PrimaryNameservers: seed.PrimaryNameservers}
	if req.Mode == "" {
		req.Mode = ModePrimary
	}
	if seed.TTL != 0 {
		req.TTL = &seed.TTL
	}
	z, e := s.buildZone(&req)
	if e != nil {
		return Zone{}, seedError(e)
	}
	z.Protection.Delete = seed.DeleteProtected
	z.Registrar = orString(seed.Registrar, z.Registrar)
	z.AuthoritativeNameservers.Delegated = slices.Clone(seed.Delegated)
	z.AuthoritativeNameservers.DelegationStatus = orString(seed.DelegationStatus, "unknown")
	s.zones[z.ID] = z
	return s.snapshot(z), nil
}

// AddRRSet preloads an RRSet into the zone named or numbered zoneKey.
func (s *Server) AddRRSet(zoneKey string, seed RRSetSeed) (RRSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.lookupZone(zoneKey)
	if z == nil {
		return RRSet{}, fmt.Errorf("adding rrset to zone %q: %w", zoneKey, ErrNotFound)
	}
	if z.Mode != ModePrimary {
		return RRSet{}, fmt.Errorf("adding rrset to secondary zone %q: %w", zoneKey, ErrInvalid)
	}
	in := rrsetInput{Name: seed.Name, Type: seed.Type, TTL: seed.TTL, Labels: seed.Labels, Records: seed.Records}
	if !seed.Unchecked {
		if e := checkRRSetInput(in, z.Name); e != nil {
			return RRSet{}, seedError(e)
		}
	}
	rs := s.putRRSet(z, seed.Name, seed.Type, seed.TTL, seed.Records)
	rs.Labels = cloneLabels(seed.Labels)
	rs.Protection.Change = seed.ChangeProtected
	s.bumpSerial(z)
	return rs.snapshot(), nil
}

func seedError(e *apiError) error {
	if e.code == CodeUniquenessError {
		return fmt.Errorf("%w: %s", ErrExists, e.message)
	}
	msg := e.message
	if d, ok := e.details.(fieldsDetails); ok && len(d.Fields) > 0 && len(d.Fields[0].Messages) > 0 {
		msg += ": " + d.Fields[0].Messages[0]
	}
	return fmt.Errorf("%w: %s", ErrInvalid, msg)
}

// Zone returns a snapshot of the zone with this id or name.
func (s *Server) Zone(key string) (Zone, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.lookupZone(key)
	if z == nil {
		return Zone{}, false
	}
	return s.snapshot(z), true
}

// RRSet returns a snapshot of one RRSet.
func (s *Server) RRSet(zoneKey, name, typ string) (RRSet, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.lookupZone(zoneKey)
	if z == nil || z.rrsets[rrsetID(name, typ)] == nil {
		return RRSet{}, false
	}
	return z.rrsets[rrsetID(name, typ)].snapshot(), true
}

// RRSets returns snapshots of a zone's RRSets in id order (nil if there is
// no such zone).
func (s *Server) RRSets(zoneKey string) []RRSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.lookupZone(zoneKey)
	if z == nil {
		return nil
	}
	return s.rrsetList(z)
}
