package hetznerapi

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/miekg/dns"
	"golang.org/x/net/publicsuffix"
)

const (
	minTTL = 60
	maxTTL = 2147483647
)

var (
	labelNameRe   = regexp.MustCompile(`^[A-Za-z0-9]([-_.A-Za-z0-9]{0,61}[A-Za-z0-9])?$`)
	labelValueRe  = regexp.MustCompile(`^([A-Za-z0-9]([-_.A-Za-z0-9]{0,61}[A-Za-z0-9])?)?$`)
	dnsLabelRe    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	rrsetLabelRe  = regexp.MustCompile(`^[a-z0-9_]([-a-z0-9_]{0,61}[a-z0-9_])?$`)
	reservedLabel = "hetzner.cloud/"
)

// checkLabelKey validates a label key: optional DNS-subdomain prefix + "/" +
// name (reference §2.4).
func checkLabelKey(k string) error {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name, prefix = prefix, ""
	}
	if !labelNameRe.MatchString(name) {
		return fmt.Errorf("invalid label key %q", k)
	}
	if !hasPrefix {
		return nil
	}
	if strings.HasPrefix(k, reservedLabel) || prefix == "hetzner.cloud" {
		return fmt.Errorf("label key prefix %q is reserved", reservedLabel)
	}
	if len(prefix) > 253 {
		return fmt.Errorf("label key prefix of %q too long", k)
	}
	for _, l := range strings.Split(prefix, ".") {
		if !dnsLabelRe.MatchString(l) {
			return fmt.Errorf("invalid label key prefix in %q", k)
		}
	}
	return nil
}

func checkLabelValue(v string) error {
	if !labelValueRe.MatchString(v) {
		return fmt.Errorf("invalid label value %q", v)
	}
	return nil
}

func checkLabels(labels map[string]string) *apiError {
	for k, v := range labels {
		if err := checkLabelKey(k); err != nil {
			return invalidField("labels", err.Error())
		}
		if err := checkLabelValue(v); err != nil {
			return invalidField("labels", err.Error())
		}
	}
	return nil
}

func checkTTL(field string, ttl int) *apiError {
	if ttl < minTTL {
		return invalidField(field, fmt.Sprintf("must be at least %d", minTTL))
	}
	if ttl > maxTTL {
		return invalidField(field, fmt.Sprintf("must be at most %d", maxTTL))
	}
	return nil
}

func checkType(t string) *apiError {
	if !slices.Contains(rrsetTypes, t) {
		return invalidField("type", "unsupported type "+quoteShort(t))
	}
	return nil
}

// checkZoneName requires a lower-case registrable domain (eTLD+1) without
// trailing dot: "sub-domain zones are not supported" (reference §1).
func checkZoneName(name string) *apiError {
	if name == "" {
		return invalidField("name", "is required")
	}
	if strings.HasSuffix(name, ".") {
		return invalidField("name", "must not end with a dot")
	}
	if name != strings.ToLower(name) {
		return invalidField("name", "must be lower case")
	}
	for _, l := range strings.Split(name, ".") {
		if !dnsLabelRe.MatchString(l) {
			return invalidField("name", "invalid domain name")
		}
	}
	suffix, icann := publicsuffix.PublicSuffix(name)
	if !icann && !strings.Contains(suffix, ".") {
		return invalidField("name", "must be under a known public suffix")
	}
	if reg, err := publicsuffix.EffectiveTLDPlusOne(name); err != nil || reg != name {
		return invalidField("name", "sub-domain zones are not supported")
	}
	return nil
}

// checkRRSetName validates a name relative to zone: lower case, "@" for the
// apex, "*" only as first label, no trailing dot, not ending in the zone.
func checkRRSetName(name, zoneName string) *apiError {
	switch {
	case name == "":
		return invalidField("name", "is required")
	case name == "@":
		return nil
	case strings.HasSuffix(name, "."):
		return invalidField("name", "must not end with a dot")
	case name != strings.ToLower(name):
		return invalidField("name", "must be lower case")
	case name == zoneName || strings.HasSuffix(name, "."+zoneName):
		return invalidField("name", "must be relative to the zone; use @ for the apex")
	case len(name)+len(zoneName)+2 > 255:
		return invalidField("name", "too long")
	}
	for i, l := range strings.Split(name, ".") {
		if i == 0 && l == "*" {
			continue
		}
		if !rrsetLabelRe.MatchString(l) {
			return invalidField("name", "invalid name "+quoteShort(name))
		}
	}
	return nil
}

// checkRecords validates a non-empty list of distinct values in zone-file
// syntax for typ.
func checkRecords(recs []Record, typ, zoneName string) *apiError {
	if len(recs) == 0 {
		return invalidField("records", "must not be empty")
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.Value] {
			return invalidField("records", "duplicate value "+quoteShort(r.Value))
		}
		seen[r.Value] = true
		if err := checkValue(r.Value, typ, zoneName); err != nil {
			return invalidField("records", err.Error())
		}
		if strings.ContainsAny(r.Comment, "\r\n") {
			return invalidField("records", "comment must be a single line")
		}
	}
	return nil
}

// checkValue parses "<zone>. 3600 IN <typ> <value>" with miekg/dns; a value
// must be exactly one RR of that type, on one line, without a comment.
func checkValue(value, typ, zoneName string) error {
	if strings.TrimSpace(value) == "" {
		return fmt.Errorf("value must not be empty")
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("value must be a single line")
	}
	if typ == "TXT" {
		if err := checkTXT(value); err != nil {
			return err
		}
	}
	origin := dns.Fqdn(zoneName)
	zp := dns.NewZoneParser(strings.NewReader(origin+" 3600 IN "+typ+" "+value+"\n"), origin, "")
	rr, ok := zp.Next()
	if !ok || zp.Err() != nil || rr == nil {
		return fmt.Errorf("invalid %s value %s", typ, quoteShort(value))
	}
	if zp.Comment() != "" {
		return fmt.Errorf("value must not contain a comment")
	}
	if dns.TypeToString[rr.Header().Rrtype] != typ {
		return fmt.Errorf("invalid %s value %s", typ, quoteShort(value))
	}
	if _, more := zp.Next(); more {
		return fmt.Errorf("value must be one record")
	}
	return nil
}

// checkTXT requires one or more quoted strings, each at most 255 bytes after
// unescaping (reference §3).
func checkTXT(v string) error {
	chunks, err := splitTXT(v)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if len(c) > 255 {
			return fmt.Errorf("TXT string longer than 255 bytes")
		}
	}
	return nil
}

// splitTXT unescapes a sequence of quoted strings separated by blanks.
func splitTXT(v string) ([]string, error) {
	var out []string
	i := 0
	for {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
		if i == len(v) {
			break
		}
		if v[i] != '"' {
			return nil, fmt.Errorf("TXT value must consist of quoted strings")
		}
		s, n, err := unquoteTXT(v[i:])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		i += n
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("TXT value must consist of quoted strings")
	}
	return out, nil
}

// unquoteTXT reads one quoted string at the start of v and returns its
// content and the number of bytes consumed.
func unquoteTXT(v string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; c {
		case '"':
			if i+1 < len(v) && v[i+1] != ' ' && v[i+1] != '\t' {
				return "", 0, fmt.Errorf("TXT strings must be separated by blanks")
			}
			return b.String(), i + 1, nil
		case '\\':
			n, adv, err := unescape(v[i+1:])
			if err != nil {
				return "", 0, err
			}
			b.WriteByte(n)
			i += adv
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated TXT string")
}

// unescape decodes the part after a backslash: \DDD or \X.
func unescape(s string) (byte, int, error) {
	if s == "" {
		return 0, 0, fmt.Errorf("dangling backslash in TXT string")
	}
	if s[0] < '0' || s[0] > '9' {
		return s[0], 1, nil
	}
	if len(s) < 3 {
		return 0, 0, fmt.Errorf("bad \\DDD escape in TXT string")
	}
	n := 0
	for _, d := range []byte(s[:3]) {
		if d < '0' || d > '9' {
			return 0, 0, fmt.Errorf("bad \\DDD escape in TXT string")
		}
		n = n*10 + int(d-'0')
	}
	if n > 255 {
		return 0, 0, fmt.Errorf("bad \\DDD escape in TXT string")
	}
	return byte(n), 3, nil
}

// checkNameservers validates primary_nameservers of a secondary zone and
// fills in the default port 53 (reference §3 [?]).
func checkNameservers(ns []PrimaryNameserver) ([]PrimaryNameserver, *apiError) {
	const f = "primary_nameservers"
	if len(ns) == 0 {
		return nil, invalidField(f, "must not be empty")
	}
	out := slices.Clone(ns)
	for i := range out {
		if _, err := netip.ParseAddr(out[i].Address); err != nil {
			return nil, invalidField(f, "invalid address "+quoteShort(out[i].Address))
		}
		if out[i].Port == 0 {
			out[i].Port = 53
		}
		if out[i].Port < 1 || out[i].Port > 65535 {
			return nil, invalidField(f, "port must be 1..65535")
		}
		switch out[i].TSIGAlgorithm {
		case "", "hmac-md5", "hmac-sha1", "hmac-sha256":
		default:
			return nil, invalidField(f, "unsupported tsig_algorithm")
		}
		if (out[i].TSIGKey == "") != (out[i].TSIGAlgorithm == "") {
			return nil, invalidField(f, "tsig_key and tsig_algorithm go together")
		}
	}
	return out, nil
}

// quoteShort quotes s for a message, cut to 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return fmt.Sprintf("%q", s)
}
