package upstream

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ValidateBaseURL parses and checks the base URL of an upstream API before
// any credential is sent to it. It accepts https, and http only when the host
// is loopback (see IsLoopbackHost). It refuses userinfo, a query, a fragment,
// an opaque form, a bad port, "." or ".." path segments and host names that
// are neither a DNS name nor an IP literal (including ambiguous numeric forms
// such as "127.1" or "0x7f.0.0.1", which some resolvers read as addresses).
//
// The returned URL has no trailing slash on its path, so callers can append
// "/resource". Warnings are for the operator: a host other than defaultHost
// (when defaultHost is not empty) and plain http to a loopback host.
//
// Errors wrap ErrBaseURL and never echo the value, which may carry a secret;
// an unparsable value is reported by its length only.
func ValidateBaseURL(raw, defaultHost string) (*url.URL, []string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: a value of %d characters does not parse as a url", ErrBaseURL, len(raw))
	}
	if err := checkURLShape(u, raw); err != nil {
		return nil, nil, err
	}
	host, err := checkHost(u)
	if err != nil {
		return nil, nil, err
	}
	loopback := IsLoopbackHost(host)
	if u.Scheme == "http" && !loopback {
		return nil, nil, fmt.Errorf("%w: http is allowed only for loopback hosts; use https", ErrBaseURL)
	}
	if err := checkPath(u.Path); err != nil {
		return nil, nil, err
	}
	clean := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimRight(u.Path, "/")}
	if u.RawPath != "" {
		clean.RawPath = strings.TrimRight(u.RawPath, "/")
	}
	return clean, baseURLWarnings(u.Scheme, host, defaultHost), nil
}

// checkURLShape refuses everything but scheme://host[:port][/path].
func checkURLShape(u *url.URL, raw string) error {
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("%w: the scheme must be https (or http to a loopback host)", ErrBaseURL)
	case u.Opaque != "":
		return fmt.Errorf("%w: the url must have the form scheme://host/path", ErrBaseURL)
	case u.User != nil:
		return fmt.Errorf("%w: credentials in the url are not allowed", ErrBaseURL)
	case strings.ContainsAny(raw, "?#"):
		return fmt.Errorf("%w: a query or fragment is not allowed", ErrBaseURL)
	case u.Host == "":
		return fmt.Errorf("%w: the url has no host", ErrBaseURL)
	}
	return nil
}

// checkHost validates the port and the host name and returns the host in
// lower case without brackets and without one trailing dot.
func checkHost(u *url.URL) (string, error) {
	if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("%w: empty port", ErrBaseURL)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%w: the port must be 1..65535", ErrBaseURL)
		}
	}
	host := strings.ToLower(u.Hostname())
	if strings.HasPrefix(u.Host, "[") {
		addr, err := netip.ParseAddr(host)
		if err != nil || !addr.Is6() || addr.Zone() != "" {
			return "", fmt.Errorf("%w: the host is not a valid ipv6 literal", ErrBaseURL)
		}
		return host, nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !addr.Is4() {
			return "", fmt.Errorf("%w: an ipv6 literal needs brackets", ErrBaseURL)
		}
		return host, nil // a dotted-quad IPv4 literal
	}
	if !validHostName(host) {
		return "", fmt.Errorf("%w: the host is neither a dns name nor an ip address", ErrBaseURL)
	}
	return strings.TrimSuffix(host, "."), nil
}

// validHostName reports whether name (lower case) is a DNS host name: labels
// of 1..63 letters, digits and inner hyphens, one optional trailing dot, at
// most 253 characters, and a last label that is not numeric (WHATWG URL
// parsing and inet_aton would read "127.1" or "0x7f" as an IPv4 address).
func validHostName(name string) bool {
	name = strings.TrimSuffix(name, ".")
	if name == "" || len(name) > 253 {
		return false
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if !validLabel(l) {
			return false
		}
	}
	return !numericLabel(labels[len(labels)-1])
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// numericLabel reports whether a label reads as a number in WHATWG's IPv4
// parser: decimal digits, or 0x followed by hex digits.
func numericLabel(l string) bool {
	digits, hex := l, false
	if strings.HasPrefix(l, "0x") {
		digits, hex = l[2:], true
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if !(c >= '0' && c <= '9' || hex && c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// checkPath refuses "." and ".." segments, which servers and proxies resolve
// differently.
func checkPath(p string) error {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%w: dot segments in the path are not allowed", ErrBaseURL)
		}
	}
	return nil
}

func baseURLWarnings(scheme, host, defaultHost string) []string {
	var w []string
	if defaultHost != "" && host != strings.TrimSuffix(strings.ToLower(defaultHost), ".") {
		w = append(w, fmt.Sprintf("the upstream host %s is not the default %s; credentials will be sent there", host, defaultHost))
	}
	if scheme == "http" {
		w = append(w, fmt.Sprintf("plain http to the loopback host %s: traffic is not encrypted", host))
	}
	return w
}

// IsLoopbackHost reports whether host names the local machine: an address in
// 127.0.0.0/8, ::1, an IPv4-mapped loopback (::ffff:127.x.y.z), "localhost"
// or a name under ".localhost" (RFC 6761), each with at most one trailing dot
// and in any case. Brackets around an IPv6 literal are accepted; ports are not.
func IsLoopbackHost(host string) bool {
	h := strings.ToLower(host)
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if addr, err := netip.ParseAddr(h); err == nil {
		return addr.Zone() == "" && addr.Unmap().IsLoopback()
	}
	if !validHostName(h) {
		return false
	}
	h = strings.TrimSuffix(h, ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}
