package vdb

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// TestFinalURLCheckedOnEveryRequest: the outbound client itself refuses a
// URL outside the route rule, whatever built it — here segments that no
// tool's grammar would let through, sent straight to the client — and the
// fake, which records every path it receives, receives none of them. The
// sign-in client reaches only the authorize and token endpoints.
func TestFinalURLCheckedOnEveryRequest(t *testing.T) {
	fake := vdbapi.Start(t, nil)
	s, err := New(Config{APIBaseURL: fake.APIURL(), SiteBaseURL: fake.SiteURL()}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	for _, segs := range [][]string{
		{"npm", "../../v2/auth/token"},
		{"exploits", "CVE-2024-1/poc"},
		{"exploits", "x", "poc;"},
		{"exploits", "x", "poc;jsessionid=1"},
		{"product", "../exploits/x/poc"},
		{"eol", "packages", "npm", "../../../../auth/token", "versions", "1"},
		{"msrc", "patch-tuesday", "../../auth/token"},
		{"vuln", "%2e%2e", "..", "auth", "api-key"},
		{"vuln", "%252e%252e/%252e%252e/auth"},
		{"vuln", `x\..\..\auth`},
		{"vuln", "x\x00"},
		{"raw", "nvd", "CVE-2021-44228"},
		{"cli.sca"},
		{"unlisted", "route", "here"},
	} {
		_, err := s.http.Do(t.Context(), &upstream.Request{URL: s.apiURL(segs, nil)})
		if !errors.Is(err, upstream.ErrURLRefused) {
			t.Errorf("%q: err = %v, want the client to refuse it", segs, err)
		}
	}
	if _, err := s.siteHTTP.Do(t.Context(), &upstream.Request{Method: http.MethodPost, URL: s.siteURL("approve")}); !errors.Is(err, upstream.ErrURLRefused) {
		t.Errorf("the sign-in client sent /approve: %v", err)
	}
	if reqs := fake.Requests(); len(reqs) != 0 {
		t.Fatalf("refused URLs reached the fake: %+v", reqs)
	}
	for _, segs := range [][]string{{"vuln", "CVE-2021-44228"}, {"go", "golang.org/x/net"}, {"npm", "@scope", "pkg", "versions"}} {
		if _, err := s.http.Do(t.Context(), &upstream.Request{URL: s.apiURL(segs, nil)}); err != nil {
			t.Errorf("%q: %v", segs, err)
		}
	}
	if n := len(fake.Requests()); n != 3 {
		t.Fatalf("%d requests for the 3 allowed URLs", n)
	}
}

// readings are the paths a server or proxy in front of the API might read
// a wire path as: as sent; decoded once; and decoded again and again with
// backslashes as slashes, matrix parameters cut and dot segments resolved.
func readings(escaped string) []string {
	out := []string{escaped}
	once, err := url.PathUnescape(escaped)
	if err != nil {
		return out
	}
	out = append(out, once)
	full := once
	for range 4 {
		d, err := url.PathUnescape(full)
		if err != nil {
			break
		}
		full = d
	}
	full = strings.ReplaceAll(full, `\`, "/")
	segs := strings.Split(full, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	return append(out, path.Clean(strings.Join(segs, "/")))
}

// FuzzFinalURL: a URL the final check accepts stays, in every reading a
// lenient server might make of it, under /v2/ and off every denied route,
// is allowed as the check decodes it, and trips none of the fake's wires
// (an oracle written apart from the route rule).
func FuzzFinalURL(f *testing.F) {
	for _, s := range []string{"npm/..%2F..%2Fv2%2Fauth%2Ftoken", "exploits/CVE-2024-1%2Fpoc", "exploits/x/poc%3B",
		"exploits/x/poc;", "vuln/%2e%2e/auth", "go/golang.org%2Fx%2Fnet", "npm/@scope/pkg", "raw/sources", "raw/nvd/x",
		"eol/packages/npm/@scope%2Fpkg/versions/1", "x/vulns", "%2e%2e/auth", "vuln/x/..%252f..%252fauth", `vuln\..\auth`,
		"EXPLOITS/x/poc", "exploits/x/Poc", "vuln/CVE-2021-44228", "kev?x=1", "npm/a/b/c/d/e/f/g/h"} {
		f.Add(s)
	}
	s, err := New(Config{APIBaseURL: "https://api.vdb.vulnetix.com"}, Deps{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		u, err := url.Parse("https://api.vdb.vulnetix.com/v2/" + rest)
		if err != nil || s.checkAPIURL(u) != nil {
			return
		}
		for _, p := range readings(u.EscapedPath()) {
			tail, ok := strings.CutPrefix(p, "/v2/")
			if !ok {
				t.Fatalf("accepted %q reads as %q, outside /v2/", u.EscapedPath(), p)
			}
			if segs := strings.Split(tail, "/"); denied(segs) {
				t.Fatalf("accepted %q reads as the denied %q", u.EscapedPath(), p)
			}
		}
		full := readings(u.EscapedPath())[2]
		if routeAllowed(strings.Split(strings.TrimPrefix(full, "/v2/"), "/")) != nil {
			t.Fatalf("accepted %q decodes to %q, outside the allowlist", u.EscapedPath(), full)
		}
		if vdbapi.TripWire(http.MethodGet, u) {
			t.Fatalf("accepted %q trips the fake's wire", u.EscapedPath())
		}
	})
}
