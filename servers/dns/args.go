package dns

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Bounds of the tools' arguments (reference §3, §8.1).
const (
	minTTL          = 60
	maxTTL          = 2147483647
	maxSegment      = 255     // a zone or RRSet name in a path segment
	maxRecords      = 1000    // records in one call
	maxValueLen     = 4096    // one record value
	maxCommentLen   = 1024    // one record comment
	maxZonefileLen  = 1 << 20 // an imported zone file, in bytes
	maxLabels       = 64      // labels on one object
	maxLabelPartLen = 320     // a label key (prefix/name) or value
	maxSelectorLen  = 1024
	maxSorts        = 5
	maxNameservers  = 16
	maxPerPageZones = 50  // zones and actions (reference §2.3)
	maxPerPageRRSet = 100 // RRSets
	maxStatuses     = 3
	maxAddressLen   = 255
	maxTSIGKeyLen   = 1024
	maxPage         = 1_000_000
)

// Sort fields per list (reference §2.5).
var (
	zoneSortFields   = []string{"id", "name", "created"}
	rrsetSortFields  = []string{"id", "name"}
	actionSortFields = []string{"id", "command", "status", "started", "finished"}
	actionStatuses   = []string{ActionRunning, ActionSuccess, ActionError}
	tsigAlgorithms   = []string{"hmac-md5", "hmac-sha1", "hmac-sha256"}
	zoneModes        = []string{ModePrimary, ModeSecondary}
)

// invalid is the tool error for an argument that breaks a rule.
func invalid(arg, format string, args ...any) *kernel.Error {
	return kernel.Errorf(kernel.InvalidArgument, "Invalid argument %q: %s.", arg, fmt.Sprintf(format, args...)).
		WithHint("Correct the argument and call the tool again.")
}

// validSegment checks a path segment: the allowed characters, not "." or
// "..", not too long. extra are characters allowed beside [A-Za-z0-9._-].
func validSegment(s, extra string) error {
	switch {
	case s == "":
		return fmt.Errorf("must not be empty")
	case len(s) > maxSegment:
		return fmt.Errorf("must be at most %d characters", maxSegment)
	case s == "." || s == "..":
		return fmt.Errorf("must not be %q", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' ||
			strings.IndexByte(extra, c) >= 0
		if !ok {
			return fmt.Errorf("may hold only letters, digits and %q", "._-"+extra)
		}
	}
	return nil
}

// validZoneName checks a zone id or name: ^(?!\.\.?$)[A-Za-z0-9._-]+$.
func validZoneName(s string) error { return validSegment(s, "") }

// validRRSetName checks an RRSet name: as a zone, plus "@" and "*".
func validRRSetName(s string) error { return validSegment(s, "@*") }

func checkZone(arg, zone string) error {
	if err := validZoneName(zone); err != nil {
		return invalid(arg, "%v", err)
	}
	return nil
}

func checkRRSet(zone, name, typ string) error {
	if err := checkZone("zone", zone); err != nil {
		return err
	}
	if err := validRRSetName(name); err != nil {
		return invalid("name", "%v", err)
	}
	if !slices.Contains(RRSetTypes, typ) {
		return invalid("type", "must be one of %s", strings.Join(RRSetTypes, ", "))
	}
	return nil
}

func checkTTL(ttl *int) error {
	if ttl != nil && (*ttl < minTTL || *ttl > maxTTL) {
		return invalid("ttl", "must be between %d and %d seconds", minTTL, maxTTL)
	}
	return nil
}

func checkRecords(recs []Record) error {
	if len(recs) == 0 {
		return invalid("records", "must hold at least one record")
	}
	if len(recs) > maxRecords {
		return invalid("records", "must hold at most %d records", maxRecords)
	}
	for i, r := range recs {
		switch {
		case strings.TrimSpace(r.Value) == "":
			return invalid("records", "record %d has an empty value", i+1)
		case len(r.Value) > maxValueLen:
			return invalid("records", "record %d's value is longer than %d bytes", i+1, maxValueLen)
		case len(r.Comment) > maxCommentLen:
			return invalid("records", "record %d's comment is longer than %d bytes", i+1, maxCommentLen)
		}
	}
	return nil
}

func checkLabels(labels map[string]string) error {
	if len(labels) > maxLabels {
		return invalid("labels", "must hold at most %d labels", maxLabels)
	}
	for k, v := range labels {
		if k == "" || len(k) > maxLabelPartLen || len(v) > maxLabelPartLen {
			return invalid("labels", "keys must be 1 to %d characters and values at most %d", maxLabelPartLen, maxLabelPartLen)
		}
	}
	return nil
}

// listArgs are the paging and sorting arguments every list tool shares.
type listArgs struct {
	Sort    []string `json:"sort,omitempty" jsonschema:"sort order: field or field:asc or field:desc, repeatable; the first decides"`
	Page    int      `json:"page,omitempty" jsonschema:"page number, starting at 1"`
	PerPage int      `json:"per_page,omitempty" jsonschema:"items per page"`
}

func (l listArgs) check(fields []string, maxPer int) error {
	if len(l.Sort) > maxSorts {
		return invalid("sort", "at most %d sort keys", maxSorts)
	}
	for _, s := range l.Sort {
		field, dir, hasDir := strings.Cut(s, ":")
		if !slices.Contains(fields, field) || hasDir && dir != "asc" && dir != "desc" {
			return invalid("sort", "%q is not one of %s, optionally with :asc or :desc", s, strings.Join(fields, ", "))
		}
	}
	if l.Page < 0 || l.Page > maxPage {
		return invalid("page", "must be between 1 and %d", maxPage)
	}
	if l.PerPage < 0 || l.PerPage > maxPer {
		return invalid("per_page", "must be between 1 and %d", maxPer)
	}
	return nil
}

func checkEnum(arg, v string, allowed []string) error {
	if v != "" && !slices.Contains(allowed, v) {
		return invalid(arg, "must be one of %s", strings.Join(allowed, ", "))
	}
	return nil
}

// nameserverArg is one primary nameserver of a secondary zone.
type nameserverArg struct {
	Address       string `json:"address" jsonschema:"IPv4 or IPv6 address of the primary nameserver"`
	Port          int    `json:"port,omitempty" jsonschema:"port, 53 when omitted"`
	TSIGKey       string `json:"tsig_key,omitempty" jsonschema:"TSIG key for the zone transfer (base64); a secret, redacted in every result"`
	TSIGAlgorithm string `json:"tsig_algorithm,omitempty" jsonschema:"TSIG algorithm"`
}

func checkNameservers(list []nameserverArg) ([]PrimaryNameserver, error) {
	const arg = "primary_nameservers"
	if len(list) == 0 {
		return nil, invalid(arg, "must hold at least one server")
	}
	if len(list) > maxNameservers {
		return nil, invalid(arg, "must hold at most %d servers", maxNameservers)
	}
	out := make([]PrimaryNameserver, 0, len(list))
	for i, n := range list {
		switch {
		case n.Address == "" || len(n.Address) > maxAddressLen:
			return nil, invalid(arg, "server %d needs an address", i+1)
		case n.Port < 0 || n.Port > 65535:
			return nil, invalid(arg, "server %d's port must be between 1 and 65535", i+1)
		case len(n.TSIGKey) > maxTSIGKeyLen:
			return nil, invalid(arg, "server %d's tsig_key is too long", i+1)
		}
		if err := checkEnum(arg, n.TSIGAlgorithm, tsigAlgorithms); err != nil {
			return nil, err
		}
		out = append(out, PrimaryNameserver{Address: n.Address, Port: n.Port, TSIGKey: n.TSIGKey, TSIGAlgorithm: n.TSIGAlgorithm})
	}
	return out, nil
}
