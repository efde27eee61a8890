package localzone

import (
	"fmt"
	"strings"
	"time"
)

// SerialPolicy is how a change bumps a zone's SOA serial.
type SerialPolicy string

// The serial policies.
const (
	// SerialDate is YYYYMMDDnn (RFC 1912 §2.2): today's first serial is
	// YYYYMMDD01, then one more per change; it stays above a serial set
	// higher by hand, and runs into tomorrow's numbers after 99 changes in
	// a day.
	SerialDate SerialPolicy = "date"
	// SerialIncrement is one more per change.
	SerialIncrement SerialPolicy = "increment"
)

// serialPolicies are the policy of every zone: a default and exceptions.
type serialPolicies struct {
	def   SerialPolicy
	zones map[string]SerialPolicy
}

// setSerialPolicy checks and keeps the policies.
func (s *store) setSerialPolicy(def SerialPolicy, zones map[string]SerialPolicy) error {
	check := func(p SerialPolicy) error {
		if p != SerialDate && p != SerialIncrement {
			return fmt.Errorf("serial policy %q is not %q or %q", p, SerialDate, SerialIncrement)
		}
		return nil
	}
	if def == "" {
		def = SerialDate
	}
	if err := check(def); err != nil {
		return err
	}
	s.serial = serialPolicies{def: def, zones: map[string]SerialPolicy{}}
	for z, p := range zones {
		if err := check(p); err != nil {
			return fmt.Errorf("zone %s: %w", z, err)
		}
		s.serial.zones[canonicalZoneName(z)] = p
	}
	return nil
}

// next is the serial after old for zone, strictly above it in serial
// arithmetic (RFC 1982; 0 is skipped when it wraps).
func (p serialPolicies) next(zone string, old uint32, now time.Time) uint32 {
	policy := p.def
	if zp, ok := p.zones[strings.ToLower(zone)]; ok {
		policy = zp
	}
	if policy == SerialDate {
		return nextSerial(old, now)
	}
	if old == 1<<32-1 {
		return 1
	}
	return old + 1
}

// nextSerial returns a serial strictly above old in the YYYYMMDDnn style:
// today's first serial when old is below it, else old+1 (which runs into
// tomorrow's numbers after 99 changes a day, and past a higher serial a
// user set).
func nextSerial(old uint32, now time.Time) uint32 {
	now = now.UTC()
	day := uint32(now.Year()*1_000_000 + int(now.Month())*10_000 + now.Day()*100)
	if old < day {
		return day + 1
	}
	if old == 1<<32-1 {
		return 1 // serial arithmetic (RFC 1982) wraps; 0 is avoided
	}
	return old + 1
}
