package hetznerapi

import (
	"maps"
	"slices"
	"time"
)

// Zone is the wire shape of a zone (reference §3).
type Zone struct {
	ID                       int64                    `json:"id"`
	Name                     string                   `json:"name"`
	Created                  time.Time                `json:"created"`
	Mode                     string                   `json:"mode"`
	TTL                      int                      `json:"ttl"`
	Labels                   map[string]string        `json:"labels"`
	Protection               ZoneProtection           `json:"protection"`
	PrimaryNameservers       []PrimaryNameserver      `json:"primary_nameservers"`
	Status                   string                   `json:"status"`
	RecordCount              int                      `json:"record_count"`
	Registrar                string                   `json:"registrar"`
	AuthoritativeNameservers AuthoritativeNameservers `json:"authoritative_nameservers"`
}

// ZoneProtection is a zone's protection flags.
type ZoneProtection struct {
	Delete bool `json:"delete"`
}

// PrimaryNameserver is one AXFR source of a secondary zone. TSIGKey is echoed
// back on purpose, as the real API does, so clients' redaction gets tested.
type PrimaryNameserver struct {
	Address       string `json:"address"`
	Port          int    `json:"port"`
	TSIGKey       string `json:"tsig_key,omitempty"`
	TSIGAlgorithm string `json:"tsig_algorithm,omitempty"`
}

// AuthoritativeNameservers describes assigned and delegated nameservers.
type AuthoritativeNameservers struct {
	Assigned            []string   `json:"assigned"`
	Delegated           []string   `json:"delegated"`
	DelegationLastCheck *time.Time `json:"delegation_last_check"`
	DelegationStatus    string     `json:"delegation_status"`
}

// RRSet is the wire shape of an RRSet; ID is "<name>/<type>".
type RRSet struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	TTL        *int              `json:"ttl"`
	Labels     map[string]string `json:"labels"`
	Protection RRSetProtection   `json:"protection"`
	Records    []Record          `json:"records"`
	Zone       int64             `json:"zone"`
}

// RRSetProtection is an RRSet's protection flags.
type RRSetProtection struct {
	Change bool `json:"change"`
}

// Record is one value of an RRSet with its optional comment.
type Record struct {
	Value   string `json:"value"`
	Comment string `json:"comment"`
}

// Action is the wire shape of an action (reference §3).
type Action struct {
	ID        int64            `json:"id"`
	Command   string           `json:"command"`
	Status    string           `json:"status"`
	Progress  int              `json:"progress"`
	Started   time.Time        `json:"started"`
	Finished  *time.Time       `json:"finished"`
	Resources []ActionResource `json:"resources"`
	Error     *ActionError     `json:"error"`
}

// ActionResource names a resource an action touches.
type ActionResource struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

// ActionError is the error of a failed action.
type ActionError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Action statuses.
const (
	StatusRunning = "running"
	StatusSuccess = "success"
	StatusError   = "error"
)

// Zone modes.
const (
	ModePrimary   = "primary"
	ModeSecondary = "secondary"
)

// HetznerNameservers are the names assigned to every zone (reference §1).
var HetznerNameservers = []string{"hydrogen.ns.hetzner.com.", "oxygen.ns.hetzner.com.", "helium.ns.hetzner.de."}

// rrsetTypes are the types the API accepts (reference §3).
var rrsetTypes = []string{"A", "AAAA", "CAA", "CNAME", "DS", "HINFO", "HTTPS", "MX", "NS",
	"PTR", "RP", "SOA", "SRV", "SVCB", "TLSA", "TXT"}

// zone is the fake's state of one zone.
type zone struct {
	Zone
	rrsets map[string]*rrset // keyed by RRSet id
	serial uint32
}

// rrset is the fake's state of one RRSet; seq orders by creation.
type rrset struct {
	RRSet
	seq int64
}

func rrsetID(name, typ string) string { return name + "/" + typ }

func (z *zone) recordCount() int {
	n := 0
	for _, rs := range z.rrsets {
		n += len(rs.Records)
	}
	return n
}

func cloneLabels(l map[string]string) map[string]string {
	if l == nil {
		return map[string]string{}
	}
	return maps.Clone(l)
}

func cloneTTL(t *int) *int {
	if t == nil {
		return nil
	}
	v := *t
	return &v
}

func (rs *rrset) snapshot() RRSet {
	c := rs.RRSet
	c.Labels = cloneLabels(rs.Labels)
	c.TTL = cloneTTL(rs.TTL)
	c.Records = slices.Clone(rs.Records)
	if c.Records == nil {
		c.Records = []Record{}
	}
	return c
}

func (a *Action) snapshot() Action {
	c := *a
	c.Resources = slices.Clone(a.Resources)
	if a.Finished != nil {
		f := *a.Finished
		c.Finished = &f
	}
	if a.Error != nil {
		e := *a.Error
		c.Error = &e
	}
	return c
}
