package vdb

import (
	"net/url"
	"slices"
	"strings"
)

// The one route rule of the VDB API: which paths under /v2 any request of
// this server may reach. vdb_request checks a caller's path against it
// (CheckPath), and the outbound client checks every request's final URL
// against it (checkAPIURL), whichever tool built the URL.

// readPrefixes are the first path segments (under /v2) a request may start
// with: the §2 read families of the reference.
var readPrefixes = []string{
	"vuln", "kev", "vulnetix-kev", "exploits", "exploit-sources", "exploit-types", "iocs", "snort-rules",
	"yara-rules", "attack-techniques", "vex", "triage", "packages", "product", "eol", "cloud-locators",
	"gcve", "identifiers", "ecosystems", "sources", "metric-types", "fix-distributions", "summary",
	"vendor-trends", "exploit-trends", "msrc", "ai-discoveries", "ai-assisted-exploits",
	"ai-in-wild-exploitations", "ai-generated-malware", "scorecard", "raw", "spec",
}

// ecosystems are the package ecosystems this server names in a path: the
// first segment of a root-level package route (/{ecosystem}/…), and the
// only values of every ecosystem argument that becomes a path segment.
var ecosystems = []string{
	"npm", "pypi", "maven", "go", "golang", "cargo", "crates.io", "nuget", "rubygems", "gem", "packagist",
	"composer", "hex", "pub", "cocoapods", "swift", "conan", "hackage", "cran", "debian", "deb", "ubuntu",
	"alpine", "apk", "rpm", "github-actions",
}

// maxPackageRoute is the most segments a root-level package route may have
// once decoded: the ecosystem, a namespaced name of up to maxNameParts
// parts, and "versions".
const maxPackageRoute = 2 + maxNameParts

// denied reports the routes no request may reach: the CLI-only RPCs, the
// credential routes, POST-only and upload families, and binary archives.
func denied(segs []string) bool {
	first := strings.ToLower(segs[0])
	for _, p := range []string{"cli.", "cli", "auth", "crit", "uploads", "health"} {
		if strings.HasPrefix(first, p) {
			return true
		}
	}
	switch {
	case first == "exploits" && len(segs) >= 3 && strings.EqualFold(segs[2], "poc"):
		return true
	case first == "raw" && !(len(segs) == 2 && segs[1] == "sources"):
		return true
	}
	return false
}

// routeAllowed is the rule: a path (its decoded segments under /v2) is
// allowed when it is not denied and starts with a read prefix, or is a
// root-level package route (a known ecosystem first, or exactly
// /{package}/vulns or /{package}/versions).
func routeAllowed(segs []string) error {
	if len(segs) == 0 || denied(segs) {
		return refusePath("this route is never reachable (CLI-only, credential, upload and binary routes)")
	}
	switch {
	case slices.Contains(readPrefixes, segs[0]):
		return nil
	case slices.Contains(ecosystems, segs[0]) && len(segs) >= 2 && len(segs) <= maxPackageRoute:
		return nil
	case len(segs) == 2 && (segs[1] == "vulns" || segs[1] == "versions"):
		return nil
	}
	return refusePath("it is not under one of the read prefixes (/vuln/, /kev, /exploits, /packages/, /{ecosystem}/…, …)")
}

// maxDecodeRounds is how many times checkAPIURL percent-decodes a path: a
// server or proxy that decodes twice (double encoding) reads no further
// than this.
const maxDecodeRounds = 3

// checkAPIURL is the outbound client's last check (upstream.Options.CheckURL)
// on every request to the API: the URL must be on the API's scheme and host,
// under <base>/v2/, and its path — percent-decoded as often as a lenient
// server would, dot segments resolved — must satisfy routeAllowed. Since no
// request this server builds holds a dot segment, an empty segment, a
// semicolon (matrix parameters, which some servers cut off), a backslash,
// a control character or a percent sign left after decoding, any of them
// is refused outright: every reading of the path a server might make is
// then the one checked.
func (s *Server) checkAPIURL(u *url.URL) error {
	if u.Scheme != s.api.Scheme || u.Host != s.api.Host || u.User != nil || u.Opaque != "" {
		return refusePath("the request is not for the VDB API's host")
	}
	p := u.EscapedPath()
	for range maxDecodeRounds {
		d, err := url.PathUnescape(p)
		if err != nil {
			return refusePath("a malformed percent-encoding")
		}
		p = d
	}
	rest, ok := strings.CutPrefix(p, s.api.Path+"/v2/")
	if !ok {
		return refusePath("the path is not under /v2/")
	}
	segs := strings.Split(rest, "/")
	for _, seg := range segs {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsFunc(seg, unsafeInPath) {
			return refusePath("once decoded, the path holds an empty or dot segment, a semicolon, a backslash, a percent sign or a control character")
		}
	}
	return routeAllowed(segs)
}

// unsafeInPath reports the characters no decoded path segment of a request
// may hold: ones that servers read as structure (";", "\", "%", "?", "#")
// and control characters.
func unsafeInPath(r rune) bool {
	return r < 0x20 || r == 0x7f || strings.ContainsRune(";\\%?#", r)
}
