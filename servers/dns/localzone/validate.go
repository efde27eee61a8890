package localzone

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// TTL bounds of the API.
const (
	minTTL     = 60
	maxTTL     = 2147483647
	defaultTTL = 3600
	maxComment = 1000
)

// canonicalZoneName lower-cases a zone reference and drops a final dot.
func canonicalZoneName(s string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
}

// validateZoneName accepts lower-case host names of letters, digits,
// hyphens and underscores (punycode for IDNs); a single all-digit label is
// refused, because a reference of digits is a zone id.
func validateZoneName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("a zone name has 1 to 253 characters")
	}
	if _, err := strconv.ParseInt(name, 10, 64); err == nil {
		return fmt.Errorf("a zone name is not a number")
	}
	for _, l := range strings.Split(name, ".") {
		if err := checkLabel(l, false); err != nil {
			return err
		}
	}
	return nil
}

// checkLabel checks one label of a name: 1..63 of [a-z0-9_-], no hyphen at
// either end; "*" only when wildcard is allowed.
func checkLabel(l string, wildcard bool) error {
	if l == "*" && wildcard {
		return nil
	}
	if l == "" || len(l) > 63 {
		return fmt.Errorf("every label has 1 to 63 characters")
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("label %q has a character other than a-z, 0-9, '-' and '_'", l)
		}
	}
	return nil
}

// validateRRSetName checks an RRSet name as the API does: "@", or a
// relative lower-case name, optionally starting with the label "*", that
// does not end with the zone's name.
func validateRRSetName(name, zone string) *dns.Error {
	if name == "@" {
		return nil
	}
	if strings.HasSuffix(name, ".") {
		return errInvalid("name", "the name is relative: no trailing dot")
	}
	if name == zone || strings.HasSuffix(name, "."+zone) {
		return errInvalid("name", "the name is relative to the zone and must not end with %s; use @ for the apex", zone)
	}
	if len(name)+1+len(zone) > 253 {
		return errInvalid("name", "the name is too long")
	}
	for i, l := range strings.Split(name, ".") {
		if err := checkLabel(l, i == 0); err != nil {
			return errInvalid("name", "%v (names are lower case)", err)
		}
	}
	return nil
}

// validateType accepts the record types of the API.
func validateType(typ string) *dns.Error {
	if slices.Contains(dns.RRSetTypes, typ) {
		return nil
	}
	return errInvalid("type", "type %q is not one of %s", typ, strings.Join(dns.RRSetTypes, ", "))
}

func validateTTL(field string, ttl int) *dns.Error {
	if ttl < minTTL || ttl > maxTTL {
		return errInvalid(field, "must be from %d to %d", minTTL, maxTTL)
	}
	return nil
}

func validateTTLPtr(field string, ttl *int) *dns.Error {
	if ttl == nil {
		return nil
	}
	return validateTTL(field, *ttl)
}

// parseRecords validates the records of one RRSet and returns them with
// canonical values: parsed by miekg/dns for the type, printed back, names
// made absolute. Values must be distinct.
func parseRecords(origin, typ string, in []dns.Record) ([]record, *dns.Error) {
	if len(in) == 0 {
		return nil, errInvalid("records", "at least one record is required")
	}
	out := make([]record, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, r := range in {
		field := fmt.Sprintf("records[%d]", i)
		v, err := canonicalValue(origin, typ, r.Value)
		if err != nil {
			return nil, errInvalid(field+".value", "%v", err)
		}
		c, cerr := checkComment(r.Comment)
		if cerr != nil {
			return nil, errInvalid(field+".comment", "%v", cerr)
		}
		if seen[v] {
			return nil, errInvalid(field+".value", "duplicate value %q", v)
		}
		seen[v] = true
		out = append(out, record{value: v, comment: c})
	}
	return out, nil
}

// canonicalValue parses value as the rdata of a typ record at the apex of
// origin (zonefile.Value) and prints it back.
func canonicalValue(origin, typ, value string) (string, error) {
	rr, err := zonefile.Value(origin, typ, value)
	if err != nil {
		return "", err
	}
	return rdataText(rr), nil
}

// checkComment trims a comment and refuses line breaks and control
// characters, which would break the zone file line it is written on.
func checkComment(c string) (string, error) {
	c = strings.TrimSpace(c)
	if len(c) > maxComment {
		return "", fmt.Errorf("longer than %d bytes", maxComment)
	}
	if !utf8.ValidString(c) || strings.ContainsFunc(c, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("a comment is one line of text without control characters")
	}
	return c, nil
}

// validateLabels checks labels as the API does: keys are an optional
// DNS-subdomain prefix and "/" and a name of up to 63 characters,
// alphanumeric at both ends with "-_." inside; values likewise or empty; the
// prefix hetzner.cloud/ is reserved.
func validateLabels(field string, labels map[string]string) *dns.Error {
	for k, v := range labels {
		prefix, name, hasPrefix := strings.Cut(k, "/")
		if !hasPrefix {
			name, prefix = prefix, ""
		}
		if hasPrefix && (prefix == "" || len(prefix) > 253 || validateZoneName(strings.ToLower(prefix)) != nil) {
			return errInvalid(field, "label key %q: bad prefix", k)
		}
		if strings.HasPrefix(k, "hetzner.cloud/") {
			return errInvalid(field, "label key %q: the prefix hetzner.cloud/ is reserved", k)
		}
		if !labelWord(name, false) {
			return errInvalid(field, "label key %q: bad name", k)
		}
		if !labelWord(v, true) {
			return errInvalid(field, "label %q: bad value", k)
		}
	}
	return nil
}

// labelWord: up to 63 of [A-Za-z0-9-_.], alphanumeric at both ends.
func labelWord(s string, emptyOK bool) bool {
	if s == "" {
		return emptyOK
	}
	if len(s) > 63 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validatePrimaries checks a secondary zone's primary servers and fills in
// the default port 53.
func validatePrimaries(in []dns.PrimaryNameserver) ([]dns.PrimaryNameserver, *dns.Error) {
	if len(in) == 0 {
		return nil, errInvalid("primary_nameservers", "a secondary zone needs at least one primary nameserver")
	}
	out := slices.Clone(in)
	for i := range out {
		field := fmt.Sprintf("primary_nameservers[%d]", i)
		if _, err := netip.ParseAddr(out[i].Address); err != nil {
			return nil, errInvalid(field+".address", "not an IP address")
		}
		if out[i].Port == 0 {
			out[i].Port = 53
		}
		if out[i].Port < 1 || out[i].Port > 65535 {
			return nil, errInvalid(field+".port", "must be from 1 to 65535")
		}
		switch out[i].TSIGAlgorithm {
		case "", "hmac-md5", "hmac-sha1", "hmac-sha256":
		default:
			return nil, errInvalid(field+".tsig_algorithm", "must be hmac-md5, hmac-sha1 or hmac-sha256")
		}
	}
	return out, nil
}

func cloneLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
