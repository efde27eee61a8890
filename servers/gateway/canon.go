package gateway

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"strings"
	"unicode/utf8"
)

// The canonical forms of targets: what a policy decides on, a confirmation
// binds, the audit's decision was made on and the upstream receives. Both
// are lexical: nothing here reads a file system or resolves a name.

// Limits of one target's value, in bytes (PATH_MAX on Linux; a URL as long
// as browsers commonly accept).
const (
	maxPathBytes = 4096
	maxURLBytes  = 8192
)

// errTarget is the cause of every refused target; the message says why.
var errTarget = errors.New("target refused")

func refuseTarget(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errTarget, fmt.Sprintf(format, args...))
}

// canonicalPath returns the lexical canonical form of an absolute POSIX
// path: repeated slashes and "." segments removed, each ".." resolved
// against the segment before it, no trailing slash (path.Clean's result).
// It refuses what the upstream could read another way than the policy: a
// relative path (its meaning is the upstream's working directory), a ".."
// that climbs above "/", a backslash (a separator on Windows), NUL and
// other control characters, a percent-encoded byte ("%2e%2e" is ".." to a
// server that decodes it), a segment of only dots and spaces other than
// "." and ".." (Windows drops trailing dots and spaces), bytes that are
// not UTF-8, and more than maxPathBytes.
func canonicalPath(p string) (string, error) {
	switch {
	case p == "":
		return "", refuseTarget("the path is empty")
	case len(p) > maxPathBytes:
		return "", refuseTarget("the path is longer than %d bytes", maxPathBytes)
	case p[0] != '/':
		return "", refuseTarget("the path is not absolute (it must start with /)")
	}
	if err := checkPathChars(p); err != nil {
		return "", err
	}
	if c := path.Clean(p); c == p { // no ".." left in a clean rooted path
		return p, checkDotSegments(p)
	}
	segs := make([]string, 0, strings.Count(p, "/"))
	for _, s := range strings.Split(p[1:], "/") {
		switch s {
		case "", ".":
		case "..":
			if len(segs) == 0 {
				return "", refuseTarget("the path climbs above /")
			}
			segs = segs[:len(segs)-1]
		default:
			segs = append(segs, s)
		}
	}
	out := "/" + strings.Join(segs, "/")
	return out, checkDotSegments(out)
}

// checkPathChars refuses the characters a path target may not hold.
func checkPathChars(p string) error {
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return refuseTarget("the path is not valid UTF-8")
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return refuseTarget("the path holds a control character (%U)", r)
		case r == '\\':
			return refuseTarget("the path holds a backslash, a separator on some systems")
		case r == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			return refuseTarget("the path holds a percent-encoded byte (%s), which some servers decode", p[i:i+3])
		}
		i += size
	}
	return nil
}

// checkDotSegments refuses a segment of only dots and spaces, other than
// "." and ".." (gone from a canonical path): Windows reads "... " or ".. "
// as "..", or as the directory itself.
func checkDotSegments(p string) error {
	for _, s := range strings.Split(p, "/") {
		if s != "" && strings.Trim(s, ". ") == "" {
			return refuseTarget("the path has the segment %q, which some systems read as . or ..", s)
		}
	}
	return nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// underRoot reports whether the canonical path p is root or below it.
func underRoot(p, root string) bool {
	return root == "/" || p == root || strings.HasPrefix(p, root+"/")
}

// defaultPorts are the ports a canonical URL leaves out, by scheme.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}

// canonicalURL returns the canonical form of an absolute URL with an
// authority ("scheme://host/path"): the scheme and host lower-cased, the
// scheme's default port and an empty port dropped, percent-encoded
// unreserved characters decoded and other percent-encodings written in
// upper case (RFC 3986 6.2.2), dot segments of the path removed (RFC 3986
// 5.2.4; "%2e" counts as a dot), and an empty path written "/". The query
// and fragment are kept, with the same percent-encoding normalization. It
// refuses what could be read two ways: a URL without a scheme or without
// "//", user information ("https://a@b/" is host b), a backslash, white
// space and control characters, characters outside ASCII (an IRI: send it
// percent-encoded), a "%" not followed by two hex digits, an empty host
// (but for file URLs), a host hostForm refuses,
// a port that is not a number, and more than
// maxURLBytes.
func canonicalURL(s string) (string, error) {
	if len(s) > maxURLBytes {
		return "", refuseTarget("the URL is longer than %d bytes", maxURLBytes)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c >= 0x7f:
			return "", refuseTarget("the URL holds white space, a control character or a character outside ASCII (percent-encode it)")
		case c == '\\':
			return "", refuseTarget("the URL holds a backslash, which some parsers read as /")
		case c == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])):
			return "", refuseTarget("the URL holds a %% that is not followed by two hex digits")
		}
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || !validScheme(scheme) {
		return "", refuseTarget("the URL has no scheme (it must be absolute, e.g. https://host/path)")
	}
	scheme = strings.ToLower(scheme)
	rest, ok = strings.CutPrefix(rest, "//")
	if !ok {
		return "", refuseTarget("the URL has no authority (scheme://host)")
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host, err := canonicalHost(scheme, rest[:end])
	if err != nil {
		return "", err
	}
	p, tail := rest[end:], ""
	if q := strings.IndexAny(p, "?#"); q >= 0 {
		p, tail = p[:q], p[q:]
	}
	p = removeDotSegments(normalizePercent(p))
	if p == "" {
		p = "/"
	}
	return scheme + "://" + host + p + normalizePercent(tail), nil
}

// validScheme is RFC 3986's scheme grammar.
func validScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// canonicalHost is the authority of a URL without user information: the
// host lower-cased (an IPv6 literal in brackets) and the port, when it is
// not the scheme's default.
func canonicalHost(scheme, auth string) (string, error) {
	if strings.Contains(auth, "@") {
		return "", refuseTarget("the URL holds user information (user@host), which hides its host")
	}
	host, port := auth, ""
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.Contains(auth[i:], "]") {
		host, port = auth[:i], auth[i+1:]
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", refuseTarget("the URL's port is not a number")
		}
	}
	if h, ok := strings.CutSuffix(host, "."); ok && h != "" && !strings.HasSuffix(h, ".") {
		host = h // the same name written fully qualified
	}
	host, ok := hostForm(host)
	if !ok {
		return "", refuseTarget("the URL's host is neither a name of letters, digits, dots, hyphens and underscores, nor an IP address in its usual form")
	}
	if host == "" && scheme != "file" {
		return "", refuseTarget("the URL has no host")
	}
	if port == "" || port == defaultPorts[scheme] {
		return host, nil
	}
	return host + ":" + port, nil
}

// hostForm returns the canonical form of a URL's host: a registered name
// of letters, digits, ".", "-", "_" and "~", lower-cased; an IPv4 address
// in dotted-decimal form; or an IPv6 address in brackets, as netip writes
// it. It refuses percent-encoding and the other characters RFC 3986 allows
// in a name, a zone in an IPv6 literal, an IPv4 address written as IPv6, and a name whose last label is a
// number but that is no dotted-decimal IPv4 address ("127.1", "0x7f.1",
// "2130706433": resolvers read them as addresses, and differently).
func hostForm(h string) (string, bool) {
	if v6, ok := strings.CutPrefix(h, "["); ok {
		v6, ok = strings.CutSuffix(v6, "]")
		a, err := netip.ParseAddr(v6)
		if !ok || err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
			return "", false
		}
		return "[" + a.String() + "]", true
	}
	for i := 0; i < len(h); i++ {
		if !isUnreserved(h[i]) {
			return "", false
		}
	}
	h = strings.ToLower(h)
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last != "" && (strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x")) {
		a, err := netip.ParseAddr(h)
		return h, err == nil && a.Is4()
	}
	return h, true
}

// normalizePercent decodes the percent-encoded unreserved characters
// (letters, digits, "-", ".", "_", "~") and writes the other encodings'
// hex digits in upper case. The caller checked that every "%" is followed
// by two hex digits.
func normalizePercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		c := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteString(strings.ToUpper(s[i : i+3]))
		}
		i += 2
	}
	return b.String()
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func isUnreserved(c byte) bool {
	return isAlpha(c) || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// removeDotSegments is RFC 3986 5.2.4 for an absolute path (or the empty
// one): "." segments go, ".." removes the segment before it and never
// climbs above the root, and a path that ended in a dot segment keeps its
// trailing slash.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/") // p starts with "/": segs[0] is ""
	out := make([]string, 0, len(segs))
	for i, s := range segs[1:] {
		last := i == len(segs)-2
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}
