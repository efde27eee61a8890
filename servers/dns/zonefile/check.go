package zonefile

import (
	"context"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"
)

// minTTL is the smallest TTL the API accepts (reference §3).
const minTTL = 60

// Check applies the documented import rules (reference §5) to text for
// zone, under the budget: $ORIGIN, when given, is the zone; $TTL and every
// explicit TTL are at least 60; class IN only; records inside the zone; an
// SOA at the apex; each of the assigned nameservers in the apex NS records.
// It returns an *Error naming the first rule broken, or ctx's error. It is
// what a provider that cannot dry-run an import checks before a
// confirmation token is issued: a file it refuses would surely be refused
// by the API.
func Check(ctx context.Context, text, zone string, assigned []string) error {
	origin := mdns.Fqdn(strings.ToLower(zone))
	if err := checkDirectives(text, origin); err != nil {
		return err
	}
	soa := 0
	var ns []string
	err := Records(ctx, text, origin, Options{DefaultTTL: 1 << 31}, func(rr mdns.RR, _ string) error {
		h := rr.Header()
		owner := strings.ToLower(h.Name)
		switch {
		case h.Class != mdns.ClassINET:
			return errorf("record %s: only class IN is supported", bound(h.Name))
		case owner != origin && !strings.HasSuffix(owner, "."+origin):
			return errorf("record %s is outside the zone", bound(h.Name))
		case h.Ttl < minTTL:
			return errorf("record %s: TTL %d is below %d", bound(h.Name), h.Ttl, minTTL)
		}
		switch {
		case h.Rrtype == mdns.TypeSOA && owner == origin:
			soa++
		case h.Rrtype == mdns.TypeSOA:
			return errorf("SOA record at %s: an SOA belongs at the apex", bound(h.Name))
		case h.Rrtype == mdns.TypeNS && owner == origin:
			ns = append(ns, strings.ToLower(rr.(*mdns.NS).Ns))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if soa != 1 {
		return errorf("the zone file needs exactly one SOA record at the apex, it has %d", soa)
	}
	for _, want := range assigned {
		if !slices.Contains(ns, mdns.Fqdn(strings.ToLower(want))) {
			return errorf("the NS records at the apex must include the assigned nameserver %s", bound(want))
		}
	}
	return nil
}

// checkDirectives checks $ORIGIN and $TTL lines.
func checkDirectives(text, origin string) error {
	lineNo := 0
	for line := range strings.Lines(text) {
		lineNo++
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "$ORIGIN":
			if strings.ToLower(f[1]) != origin {
				return errorf("$ORIGIN at line %d: must be %s", lineNo, origin)
			}
		case "$TTL":
			v, ok := ttlValue(f[1])
			if !ok || v < minTTL {
				return errorf("$TTL at line %d: want a TTL of at least %d", lineNo, minTTL)
			}
		}
	}
	return nil
}

// ttlValue reads a TTL in seconds or BIND units (1h30m).
func ttlValue(s string) (uint64, bool) {
	var total, cur uint64
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= '0' && c <= '9':
			cur = cur*10 + uint64(c-'0')
		case strings.ContainsRune("smhdw", c):
			total += cur * map[rune]uint64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 604800}[c]
			cur = 0
		default:
			return 0, false
		}
		if total+cur > 1<<32 {
			return 0, false
		}
	}
	return total + cur, s != ""
}

// bound cuts a name quoted in an error to 100 bytes.
func bound(s string) string {
	if len(s) <= 100 {
		return s
	}
	return strings.ToValidUTF8(s[:100], "") + "…"
}
