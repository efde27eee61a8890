package httpguard

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// loopbackHosts are the names a loopback listener answers to.
var loopbackHosts = []string{"localhost", "127.0.0.1", "[::1]"}

// DefaultHosts returns the Host allowlist for a server bound to bindAddr
// ("host:port" or a bare host): the loopback names (localhost, 127.0.0.1,
// [::1]) always, plus the bound IP literal when it is a specific address.
// A wildcard bind (0.0.0.0, ::, empty) adds nothing: a server reachable
// from other machines must list its public names itself.
func DefaultHosts(bindAddr string) []string {
	hosts := append([]string(nil), loopbackHosts...)
	h := bindAddr
	if host, _, err := net.SplitHostPort(bindAddr); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	a, err := netip.ParseAddr(h)
	switch {
	case err != nil: // a name
		if name, err := canonicalName(h); err == nil && name != "localhost" {
			hosts = append(hosts, name)
		}
	case a.IsUnspecified() || a == netip.IPv6Loopback() || a.Unmap() == netip.AddrFrom4([4]byte{127, 0, 0, 1}):
	case a.Is4() || a.Is4In6():
		hosts = append(hosts, a.Unmap().String())
	default:
		hosts = append(hosts, "["+a.WithZone("").String()+"]")
	}
	return hosts
}

// HostAllowed reports whether a request for hostport (a Host header's
// form: "name:8080", "[::1]:80") passes the Host allowlist allowed, as
// the guard reads it (DefaultHosts(bindAddr) when allowed is empty): for
// a server to check at startup a URL by which it will be reached (the
// gateway's --advertise-url). A malformed list is an error.
func HostAllowed(allowed []string, bindAddr, hostport string) (bool, error) {
	if len(allowed) == 0 {
		allowed = DefaultHosts(bindAddr)
	}
	m, err := hostMap(allowed)
	if err != nil {
		return false, err
	}
	return hostAllowed(m, hostport), nil
}

// hostOptions configures a hostGuard.
type hostOptions struct {
	// Logger, when set, records refused Host values (quoted, truncated).
	Logger *slog.Logger
}

// hostGuard refuses requests whose Host header is not on an allowlist: the
// DNS-rebinding defence. Unlike the go-sdk's check it applies on every
// interface, not only on loopback listeners.
//
// Names compare case-insensitively, a trailing dot is ignored, IP literals
// compare in canonical form and IPv6 literals are bracketed. An entry
// without a port (or with port "*") matches any port; "name:8080" matches
// only that port. The zero value allows the loopback names only.
type hostGuard struct {
	allowed map[string][]string // canonical host -> ports ("" = any)
	opts    hostOptions
}

var defaultHosts = mustHosts(loopbackHosts)

func mustHosts(list []string) map[string][]string {
	m, err := hostMap(list)
	if err != nil {
		panic(err)
	}
	return m
}

// newHosts returns a hostGuard for the given allowlist (DefaultHosts(addr)
// is a good start); an empty list means the loopback names. opts may be nil.
// Malformed entries are an error.
func newHosts(allowed []string, opts *hostOptions) (*hostGuard, error) {
	h := &hostGuard{}
	if opts != nil {
		h.opts = *opts
	}
	if len(allowed) > 0 {
		m, err := hostMap(allowed)
		if err != nil {
			return nil, err
		}
		h.allowed = m
	}
	return h, nil
}

func hostMap(list []string) (map[string][]string, error) {
	m := make(map[string][]string, len(list))
	for _, entry := range list {
		host, port, err := splitHost(entry)
		if err == nil && port == "*" {
			port = ""
		}
		if err != nil || host == "" {
			return nil, fmt.Errorf("host allowlist entry %q: %w", entry, errInvalidConfig)
		}
		m[host] = append(m[host], port)
	}
	return m, nil
}

// Check refuses a request whose Host is not allowed; errors wrap
// errHostForbidden.
func (h *hostGuard) Check(r *http.Request) error {
	allowed := defaultHosts
	if h != nil && h.allowed != nil {
		allowed = h.allowed
	}
	if !hostAllowed(allowed, r.Host) {
		return errHostForbidden
	}
	return nil
}

func hostAllowed(allowed map[string][]string, hostport string) bool {
	host, port, err := splitHost(hostport)
	if err != nil || host == "" || port == "*" {
		return false
	}
	for _, p := range allowed[host] {
		if p == "" || p == port {
			return true
		}
	}
	return false
}

// Handler answers 403 host_forbidden when Check fails, else calls next.
func (h *hostGuard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.Check(r); err != nil {
			if h != nil && h.opts.Logger != nil {
				h.opts.Logger.Warn("httpguard: refused Host", "host", truncate(r.Host, 256))
			}
			writeCheckError(w, nil, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// splitHost splits a Host header (or allowlist entry) into its canonical
// host and its port (empty when absent). Names are lowercased, a trailing
// dot dropped; IPv6 must be bracketed; IP literals are canonicalized.
func splitHost(hostport string) (host, port string, err error) {
	host = hostport
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", "", fmt.Errorf("unclosed bracket")
		}
		host, port = hostport[1:end], hostport[end+1:]
		if port != "" {
			if port[0] != ':' {
				return "", "", fmt.Errorf("junk after bracket")
			}
			port = port[1:]
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", "", fmt.Errorf("bad IPv6 literal")
		}
		host = "[" + a.String() + "]"
	} else {
		if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
			host, port = hostport[:i], hostport[i+1:]
		}
		if host, err = canonicalName(host); err != nil {
			return "", "", err
		}
	}
	if hostport != "" && strings.HasSuffix(hostport, ":") {
		return "", "", fmt.Errorf("empty port")
	}
	if port != "" && port != "*" {
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || port[0] == '+' {
			return "", "", fmt.Errorf("bad port")
		}
	}
	return host, port, nil
}

// canonicalName lowercases a DNS name or IPv4 literal, dropping one
// trailing dot; other characters than letters, digits, '-', '_' and '.'
// are refused.
func canonicalName(s string) (string, error) {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return "", fmt.Errorf("bad name length")
	}
	if s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return "", fmt.Errorf("empty label")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", fmt.Errorf("bad name character")
		}
	}
	if c := s[len(s)-1]; '0' <= c && c <= '9' { // only then can it be an IPv4 literal
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
			return a.String(), nil
		}
	}
	return strings.ToLower(s), nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
