package zonefile

import (
	"fmt"
	"strings"

	mdns "github.com/miekg/dns"
)

// Value parses value, a record's data in zone-file syntax, as a record of
// type typ owned by origin (absolute), class IN, TTL 3600: names in it are
// made absolute against origin. It is the one reading of a record value a
// tool was given, for every provider. It refuses an empty value, line
// breaks and control characters, a TXT value with blanks that is not
// quoted, $INCLUDE, and anything that is not exactly one record of typ.
func Value(origin, typ, value string) (mdns.RR, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, fmt.Errorf("the value is empty")
	}
	if strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, fmt.Errorf("the value has a line break or control character")
	}
	if typ == "TXT" && value[0] != '"' && strings.ContainsAny(value, " \t") {
		return nil, fmt.Errorf("TXT values are quoted strings, e.g. \"v=spf1 -all\"")
	}
	zp := mdns.NewZoneParser(strings.NewReader("@ 3600 IN "+typ+" "+value+"\n"), origin, "")
	zp.SetIncludeAllowed(false)
	rr, ok := zp.Next()
	if !ok {
		if err := zp.Err(); err != nil {
			return nil, fmt.Errorf("not a valid %s value: %s", typ, strings.TrimPrefix(err.Error(), "dns: "))
		}
		return nil, fmt.Errorf("not a valid %s value", typ)
	}
	if _, more := zp.Next(); more || zp.Err() != nil || mdns.Type(rr.Header().Rrtype).String() != typ {
		return nil, fmt.Errorf("not a single %s value", typ)
	}
	if RdataText(rr) == "" {
		return nil, fmt.Errorf("not a valid %s value", typ)
	}
	return rr, nil
}

// RdataText is a record's value as the tools show it: its text form
// without the header (names absolute, as miekg/dns prints them).
func RdataText(rr mdns.RR) string {
	return strings.TrimPrefix(rr.String(), rr.Header().String())
}
