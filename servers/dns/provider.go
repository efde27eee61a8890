package dns

import (
	"context"
	"fmt"
	"time"
)

// Provider is the core every DNS backend serves: zones read, RRSets read,
// and record changes. The hetzner, localzone and rfc2136 packages implement
// it; the tools never know which one they hold. What a backend can do
// beyond the core it states by implementing the capability interfaces below
// (ZoneManager, Importer, Labeler, Protector, Commenter, SecondaryManager,
// ActionLog); the server registers a tool only when its provider implements
// the interface the tool needs (Capabilities, ServedTools), so no provider
// has to pretend to a model its protocol lacks.
//
// The model is the Hetzner Cloud DNS API's (../shared/reference): a zone holds
// RRSets keyed by (name, type); names are relative to the zone, lower case,
// "@" for the apex; the SOA and NS records are managed by the provider.
// A mutation may return an Action, which ActionLog providers let the tools
// follow; a provider without one completes the change before it returns
// (and returns a nil Action).
//
// Zone arguments are an id or a name; implementations accept both. Errors that
// the provider's API (or store) reports about the request are *Error values
// with the API's documented codes; any other error means the provider broke.
type Provider interface {
	// Name is "hetzner", "local" or "rfc2136"; it appears in startup output
	// and in the untrusted envelope's source.
	Name() string

	// ListZones returns one page of zones; the caller owns the slice (the
	// authorization filter reuses it).
	ListZones(ctx context.Context, opts ListZonesOptions) (ZoneList, error)
	GetZone(ctx context.Context, zone string) (Zone, error)
	ExportZonefile(ctx context.Context, zone string) (string, error)

	ListRRSets(ctx context.Context, zone string, opts ListRRSetsOptions) (RRSetList, error)
	GetRRSet(ctx context.Context, zone, name, typ string) (RRSet, error)
	CreateRRSet(ctx context.Context, zone string, req CreateRRSetRequest) (RRSet, *Action, error)
	DeleteRRSet(ctx context.Context, zone, name, typ string) (*Action, error)
	SetRecords(ctx context.Context, zone, name, typ string, records []Record) (*Action, error)
	// AddRecords appends records, creating the RRSet when it is missing; ttl
	// (nil: unchanged / zone default) applies as the API applies it.
	AddRecords(ctx context.Context, zone, name, typ string, records []Record, ttl *int) (*Action, error)
	RemoveRecords(ctx context.Context, zone, name, typ string, records []Record) (*Action, error)
	// ChangeRRSetTTL sets the TTL; nil returns the RRSet to the zone default
	// (a provider without zone defaults refuses nil as invalid_input).
	ChangeRRSetTTL(ctx context.Context, zone, name, typ string, ttl *int) (*Action, error)
}

// ZoneManager is a provider that creates and deletes zones and keeps a
// default TTL per zone: create_zone, delete_zone, change_zone_ttl.
type ZoneManager interface {
	CreateZone(ctx context.Context, req CreateZoneRequest) (Zone, *Action, error)
	DeleteZone(ctx context.Context, zone string) (*Action, error)
	ChangeZoneTTL(ctx context.Context, zone string, ttl int) (*Action, error)
}

// Importer is a provider that replaces a zone's contents with a zone file:
// import_zonefile.
type Importer interface {
	ImportZonefile(ctx context.Context, zone, zonefile string) (*Action, error)
	// CheckImport reports, without changing anything, an error ImportZonefile
	// would surely give for this file on zone z as just read: a secondary
	// zone, a file that does not parse or is over the record budget, one
	// that breaks the import rules. The confirmation gate asks it before it
	// issues a token, so that no token is issued for a call that cannot run.
	CheckImport(ctx context.Context, z Zone, zonefile string) error
}

// Labeler is a provider that keeps labels on zones and RRSets:
// update_zone, update_rrset, and label selectors in the listings.
type Labeler interface {
	UpdateZone(ctx context.Context, zone string, labels map[string]string) (Zone, error)
	UpdateRRSet(ctx context.Context, zone, name, typ string, labels map[string]string) (RRSet, error)
}

// Protector is a provider that keeps delete protection on zones and change
// protection on RRSets: change_zone_protection, change_rrset_protection.
type Protector interface {
	ChangeZoneProtection(ctx context.Context, zone string, delete bool) (*Action, error)
	ChangeRRSetProtection(ctx context.Context, zone, name, typ string, change bool) (*Action, error)
}

// Commenter is a provider that keeps a comment with each record:
// update_records.
type Commenter interface {
	// UpdateRecords changes only the comments of existing records (values must match).
	UpdateRecords(ctx context.Context, zone, name, typ string, records []Record) (*Action, error)
}

// SecondaryManager is a provider that keeps secondary zones and their
// primaries: change_primary_nameservers.
type SecondaryManager interface {
	ChangePrimaryNameservers(ctx context.Context, zone string, servers []PrimaryNameserver) (*Action, error)
}

// ActionLog is a provider whose changes are actions that can be listed and
// followed: list_zone_actions, get_zone_action.
type ActionLog interface {
	// ListActions lists actions, of one zone when opts.Zone is set.
	ListActions(ctx context.Context, opts ListActionsOptions) (ActionList, error)
	GetAction(ctx context.Context, id int64) (Action, error)
}

// Zone modes.
const (
	ModePrimary   = "primary"
	ModeSecondary = "secondary"
)

// Action statuses.
const (
	ActionRunning = "running"
	ActionSuccess = "success"
	ActionError   = "error"
)

// Zone is a DNS zone, field for field the Hetzner API's (JSON names included).
type Zone struct {
	ID                       int64                     `json:"id"`
	Name                     string                    `json:"name"`
	Created                  time.Time                 `json:"created"`
	Mode                     string                    `json:"mode"`
	TTL                      int                       `json:"ttl"`
	Labels                   map[string]string         `json:"labels"`
	Protection               ZoneProtection            `json:"protection"`
	PrimaryNameservers       []PrimaryNameserver       `json:"primary_nameservers,omitempty"`
	Status                   string                    `json:"status"`
	RecordCount              int                       `json:"record_count"`
	Registrar                string                    `json:"registrar,omitempty"`
	AuthoritativeNameservers *AuthoritativeNameservers `json:"authoritative_nameservers,omitempty"`
	// DNSSEC is a signed zone's key and the DS record its parent zone
	// needs; nil for a zone its provider does not sign.
	DNSSEC *ZoneDNSSEC `json:"dnssec,omitempty"`
}

// ZoneDNSSEC is how a zone is signed: the algorithm, the denial of
// existence, the public key (never the private one) and the DS records to
// give the parent zone.
type ZoneDNSSEC struct {
	Algorithm string   `json:"algorithm"` // ECDSAP256SHA256 or ED25519
	Denial    string   `json:"denial"`    // nsec or nsec3
	KeyTag    uint16   `json:"key_tag"`
	DNSKEY    string   `json:"dnskey" jsonschema:"the zone's public key, as the DNSKEY record's data"`
	DS        []string `json:"ds" jsonschema:"the DS records for the parent zone, in zone-file syntax"`
}

// ZoneProtection is a zone's delete protection.
type ZoneProtection struct {
	Delete bool `json:"delete"`
}

// PrimaryNameserver is a server a secondary zone transfers from. TSIGKey is a
// secret: the envelope redacts it in every result.
type PrimaryNameserver struct {
	Address       string `json:"address"`
	Port          int    `json:"port,omitempty"`
	TSIGKey       string `json:"tsig_key,omitempty"`
	TSIGAlgorithm string `json:"tsig_algorithm,omitempty"`
}

// AuthoritativeNameservers reports the zone's assigned and delegated servers.
type AuthoritativeNameservers struct {
	Assigned            []string   `json:"assigned"`
	Delegated           []string   `json:"delegated"`
	DelegationLastCheck *time.Time `json:"delegation_last_check"`
	DelegationStatus    string     `json:"delegation_status"`
}

// RRSet is all records of one (name, type) pair in a zone.
type RRSet struct {
	ID         string            `json:"id"` // "<name>/<type>", e.g. "www/A", "@/MX"
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	TTL        *int              `json:"ttl"` // nil: the zone default
	Labels     map[string]string `json:"labels"`
	Protection RRSetProtection   `json:"protection"`
	Records    []Record          `json:"records"`
	Zone       int64             `json:"zone"`
}

// RRSetProtection is an RRSet's change protection (it blocks deletion too).
type RRSetProtection struct {
	Change bool `json:"change"`
}

// Record is one value of an RRSet, in zone-file syntax.
type Record struct {
	Value   string `json:"value" jsonschema:"the record's value in zone-file syntax, e.g. 198.51.100.7 or \"v=spf1 -all\""`
	Comment string `json:"comment,omitempty" jsonschema:"an optional comment stored with the record"`
}

// Action is a provider operation that runs and then succeeds or fails.
type Action struct {
	ID        int64            `json:"id"`
	Command   string           `json:"command"`
	Status    string           `json:"status"`
	Progress  int              `json:"progress"`
	Started   time.Time        `json:"started"`
	Finished  *time.Time       `json:"finished"`
	Resources []ActionResource `json:"resources"`
	Error     *ActionFailure   `json:"error"`
}

// ActionResource names a resource an action touches.
type ActionResource struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

// ActionFailure is why an action ended in error.
type ActionFailure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Pagination is the API's meta.pagination.
type Pagination struct {
	Page         int  `json:"page"`
	PerPage      int  `json:"per_page"`
	PreviousPage *int `json:"previous_page"`
	NextPage     *int `json:"next_page"`
	LastPage     *int `json:"last_page"`
	TotalEntries *int `json:"total_entries"`
}

// The lists put their pagination first: a result cut to the envelope's
// size keeps what comes first, and the paging metadata must survive.

// ZoneList is one page of zones.
type ZoneList struct {
	Pagination Pagination `json:"pagination"`
	Zones      []Zone     `json:"zones"`
}

// RRSetList is one page of RRSets.
type RRSetList struct {
	Pagination Pagination `json:"pagination"`
	RRSets     []RRSet    `json:"rrsets"`
}

// ActionList is one page of actions.
type ActionList struct {
	Pagination Pagination `json:"pagination"`
	Actions    []Action   `json:"actions"`
}

// ListZonesOptions filters, sorts and pages ListZones. Zero values mean the
// API's defaults.
type ListZonesOptions struct {
	Name          string
	Mode          string
	LabelSelector string
	Sort          []string // "name", "name:desc", "id", "created"
	Page          int
	PerPage       int
}

// ListRRSetsOptions filters, sorts and pages ListRRSets.
type ListRRSetsOptions struct {
	Name          string
	Types         []string
	LabelSelector string
	Sort          []string
	Page          int
	PerPage       int
}

// ListActionsOptions filters, sorts and pages ListActions.
type ListActionsOptions struct {
	Zone    string // empty: actions of every zone
	Status  []string
	Sort    []string
	Page    int
	PerPage int
}

// CreateZoneRequest is the body of a zone creation.
type CreateZoneRequest struct {
	Name               string
	Mode               string
	TTL                *int
	Labels             map[string]string
	PrimaryNameservers []PrimaryNameserver
	Zonefile           string
}

// CreateRRSetRequest is the body of an RRSet creation.
type CreateRRSetRequest struct {
	Name    string
	Type    string
	TTL     *int
	Labels  map[string]string
	Records []Record
}

// Error is a refusal reported by the provider's API or store: the request was
// understood and declined. Code is the API's documented code (not_found,
// invalid_input, uniqueness_error, protected, locked, conflict,
// incorrect_zone_mode, token_readonly, unauthorized, forbidden,
// rate_limit_exceeded, ...). Message is upstream text: untrusted, already cut
// to a bounded length, never HTML.
type Error struct {
	Status  int
	Code    string
	Message string
	// Fields lists the invalid fields of an invalid_input error.
	Fields []FieldError
	// RetryAfter is set for rate_limit_exceeded when the API said when to retry.
	RetryAfter time.Duration
}

// FieldError is one invalid field of an invalid_input error.
type FieldError struct {
	Name     string   `json:"name"`
	Messages []string `json:"messages,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("dns provider: %s (status %d)", e.Code, e.Status)
}

// RRSetTypes are the record types the API accepts.
var RRSetTypes = []string{"A", "AAAA", "CAA", "CNAME", "DS", "HINFO", "HTTPS", "MX", "NS", "PTR", "RP", "SOA", "SRV", "SVCB", "TLSA", "TXT"}
