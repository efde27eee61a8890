package vdb

import (
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"
)

// TestCheckPath is the escape hatch's table: one row per refusal the
// security page and reference §10.3 name, and the shapes it accepts.
func TestCheckPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/vuln/CVE-2024-3094/tree-sitter", true},
		{"/cloud-locators", true},
		{"/raw/sources", true},
		{"/spec", true},
		{"/npm/left-pad", true},
		{"/left-pad/vulns", true},
		{"/left-pad/versions", true},
		{"/exploits/6f1c9a7e", true},
		{"/vuln/a%3Ab", true}, // an encoded colon is harmless
		// the CLI-only RPCs, credential routes, POST-only and upload families
		{"/cli.sca", false},
		{"/cli.quality-gate-config", false},
		{"/CLI.sca", false},
		{"/auth/token", false},
		{"/auth/api-key", false},
		{"/authx", false},
		{"/crit/lookup", false},
		{"/uploads/initiate", false},
		{"/cli.x/vulns", false},
		{"/auth/vulns", false},
		// binary archives
		{"/exploits/6f1c9a7e/poc", false},
		{"/raw/nvd/CVE-2024-3094", false},
		// absolute and scheme-relative URLs
		{"https://evil.example/v2/vuln/x", false},
		{"//evil.example/vuln/x", false},
		{"vuln/x", false},
		{"", false},
		// dot segments, plain and encoded, and double encoding
		{"/vuln/../auth/token", false},
		{"/vuln/./x", false},
		{"/vuln/%2e%2e/auth/token", false},
		{"/vuln/%2E%2E/auth", false},
		{"/vuln/.%2e/auth", false},
		{"/vuln%2f..%2fauth%2ftoken", false},
		{"/vuln/x%2Fy", false},
		{"/vuln/x%5cy", false},
		{"/vuln/%252e%252e/auth", false},
		{"/vuln/%25", false},
		{"/vuln/%zz", false},
		{"/vuln/%2", false},
		// backslashes, query and fragment smuggling, userinfo, controls
		{"/vuln\\..\\auth", false},
		{"/vuln/x?path=/auth/token", false},
		{"/vuln/x#/auth", false},
		{"/exploits/x/poc;", false}, // matrix parameters, which some servers cut off
		{"/exploits/x/poc%3B", false},
		{"/vuln/a;b", false},
		{"/vuln/x%3Fa", false},
		{"/vuln/x%23a", false},
		{"/vuln/@evil", false},
		{"/vuln/x\x00", false},
		{"/vuln/x\n", false},
		{"/vuln/ x", false},
		{"/vuln/\u00e9", false},
		{"/vuln//x", false},
		{"/vuln/x/", false},
		// not under a read prefix
		{"/health", false},
		{"/v2/vuln/x", false},
		{"/unknown/a/b", false},
		// overlong
		{"/vuln/" + strings.Repeat("a", MaxRequestPath), false},
	} {
		_, err := CheckPath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}

// FuzzCheckPath: no accepted path, once built into the request URL the way
// the server builds it and normalised the way a server would, leaves the
// allowlist or reaches a denied route.
func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"/vuln/CVE-2024-3094", "/vuln/%2e%2e/auth", "/cli.sca", "/npm/x", "/a/vulns",
		"/raw/sources", "/exploits/x/poc", "//x", "/vuln/x%3A", "/vuln/..%2f"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://api.vdb.vulnetix.com")
	f.Fuzz(func(t *testing.T, p string) {
		segs, err := CheckPath(p)
		if err != nil {
			return
		}
		_, raw := apiPath(segs...)
		u, err := url.Parse(base.String() + "/v2" + raw)
		if err != nil {
			t.Fatalf("accepted %q builds an unparsable URL: %v", p, err)
		}
		if u.Host != base.Host || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			t.Fatalf("accepted %q escapes the host or smuggles a query: %s", p, u)
		}
		clean := path.Clean(u.Path)
		if clean != u.Path || !strings.HasPrefix(clean, "/v2/") {
			t.Fatalf("accepted %q normalises to %q", p, clean)
		}
		again := strings.Split(strings.TrimPrefix(clean, "/v2/"), "/")
		if len(again) != len(segs) || denied(again) || routeAllowed(again) != nil {
			t.Fatalf("accepted %q normalises outside the allowlist: %q", p, again)
		}
		for _, s := range again {
			if s == "." || s == ".." || strings.ContainsAny(s, "\\%") {
				t.Fatalf("accepted %q keeps %q", p, s)
			}
		}
		if slices.Contains(again, "") {
			t.Fatalf("accepted %q has an empty segment", p)
		}
	})
}
