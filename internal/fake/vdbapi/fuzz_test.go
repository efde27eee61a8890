package vdbapi

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParsePage: the fake's limit/offset parser never panics and never
// accepts a value outside its range.
func FuzzParsePage(f *testing.F) {
	for _, s := range []string{"limit=10&offset=20", "limit=0", "limit=101", "limit=-1", "offset=1e3",
		"limit=10&limit=20", "limit=%2B5", "limit=000000100", "limit=9999999999", "offset=", "limit=+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		p, err := parsePage(q, 20, 100)
		if err != nil {
			return
		}
		if p.Limit < 1 || p.Limit > 100 || p.Offset < 0 {
			t.Fatalf("%q accepted as %+v", raw, p)
		}
		if len(q["limit"]) > 1 || len(q["offset"]) > 1 {
			t.Fatalf("%q: a repeated key was accepted", raw)
		}
	})
}

// FuzzMatchRoute: routing never panics; a match has no empty parameter and
// an {eco} parameter is always a known ecosystem.
func FuzzMatchRoute(f *testing.F) {
	for _, s := range []string{"vuln/CVE-2021-44228", "vuln/CVE-2021-44228/fixes/registry", "npm/lodash",
		"maven/org.apache/log4j-core", "lodash/vulns", "x/y/versions", "vuln/%2e%2e", "vuln/%ZZ", "vuln//x",
		"cli.vuln", "exploits/a/poc", "eol/packages/npm/a/versions/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		h, p, err := matchRoute(path)
		if err != nil {
			if h != nil {
				t.Fatal("handler with an error")
			}
			return
		}
		if h == nil {
			t.Fatalf("%q: matched without a handler", path)
		}
		for k, v := range p {
			if v == "" {
				t.Fatalf("%q: empty parameter %s", path, k)
			}
		}
		if eco, ok := p["eco"]; ok && !knownEcosystem(eco) {
			t.Fatalf("%q: unknown ecosystem %q matched", path, eco)
		}
		if strings.Contains(path, "//") {
			t.Fatalf("%q: empty segment matched", path)
		}
	})
}
