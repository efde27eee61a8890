package hetzner

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// maxSegmentLen bounds a zone or RRSet name segment (a DNS name has at most
// 253 characters).
const maxSegmentLen = 255

// invalidInput is the refusal for an argument caught before sending: the
// same shape as the API's 422 invalid_input.
func invalidInput(field, msg string) *dns.Error {
	return &dns.Error{
		Status:  http.StatusUnprocessableEntity,
		Code:    "invalid_input",
		Message: "invalid input in field '" + field + "'",
		Fields:  []dns.FieldError{{Name: field, Messages: []string{msg}}},
	}
}

// checkZone validates a zone id or name: ^(?!\.\.?$)[A-Za-z0-9._-]+$.
func checkZone(zone string) error {
	if !validSegment(zone, false) {
		return invalidInput("zone", "must be a zone id or name of letters, digits, '.', '_' and '-', and not '.' or '..'")
	}
	return nil
}

// checkRRSet validates a zone, an RRSet name (the zone alphabet plus '@' and
// '*') and a type from dns.RRSetTypes.
func checkRRSet(zone, name, typ string) error {
	if err := checkZone(zone); err != nil {
		return err
	}
	if !validSegment(name, true) {
		return invalidInput("name", "must be '@', or letters, digits, '.', '_', '-' and '*', and not '.' or '..'")
	}
	return checkType("type", typ)
}

func checkType(field, typ string) error {
	if !slices.Contains(dns.RRSetTypes, typ) {
		return invalidInput(field, "must be one of the record types the API accepts, in upper case")
	}
	return nil
}

// validSegment implements ^(?!\.\.?$)[A-Za-z0-9._-]+$ without lookahead,
// with '@' and '*' allowed for RRSet names.
func validSegment(s string, rrsetName bool) bool {
	if s == "" || s == "." || s == ".." || len(s) > maxSegmentLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.' || c == '_' || c == '-':
		case rrsetName && (c == '@' || c == '*'):
		default:
			return false
		}
	}
	return true
}

// checkPaging refuses negative page numbers; zero means the API's default.
func checkPaging(page, perPage int) error {
	if page < 0 {
		return invalidInput("page", "must be at least 1")
	}
	if perPage < 0 {
		return invalidInput("per_page", "must be at least 1")
	}
	return nil
}

// rrsetPath is zones/{z}/rrsets/{n}/{t} plus any further segments.
func rrsetPath(zone, name, typ string, more ...string) []string {
	return append([]string{"zones", zone, "rrsets", name, typ}, more...)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
