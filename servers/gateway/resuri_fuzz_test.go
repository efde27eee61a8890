package gateway

import (
	"testing"
)

// FuzzResourceURI: a resource URI's canonical form is canonical again
// (idempotent: a read decided on it is decided the same a second time) and
// printable ASCII; a URI the gateway namespaces for an upstream reverses
// to that upstream and exactly that URI, and a namespaced URI never
// reverses to another upstream's. Seeds: testdata/fuzz/FuzzResourceURI.
func FuzzResourceURI(f *testing.F) {
	for _, s := range []string{"file:///tmp/a.txt", "https://Example.COM/a/../b?q=%7e", "urn:isbn:0451450523", "test://static/resource/1",
		"bulwark://up/file:///etc/passwd", "a:%zz", "HTTP://h/%2F%2e%2E/x", "mailto:a@b", "up/x", "file:///a/./b/../../c", "s3://bucket/k%20ey"} {
		f.Add(s)
	}
	up, other := &Upstream{Name: "up"}, &Upstream{Name: "other", Prefix: "up2"}
	g := &Gateway{links: []*link{{u: up}, {u: other}}}
	f.Fuzz(func(t *testing.T, s string) {
		if c, err := canonicalResourceURI(s); err == nil {
			if !printableASCII(c) {
				t.Fatalf("canonical %q of %q is not printable ASCII", c, s)
			}
			if c2, err := canonicalResourceURI(c); err != nil || c2 != c {
				t.Fatalf("canonical form of %q is %q, and of that %q (%v)", s, c, c2, err)
			}
		}
		if ns, err := servedURI(up, s); err == nil {
			l, uri, ok := g.upstreamURI(ns)
			if !ok || l.u != up || uri != s {
				t.Fatalf("%q namespaced as %q reverses to %v %q %v", s, ns, l, uri, ok)
			}
		}
		if l, _, ok := g.upstreamURI(s); ok && s[len(resourceScheme):len(resourceScheme)+len(l.u.prefix())+1] != l.u.prefix()+"/" {
			t.Fatalf("%q reverses to upstream %q", s, l.u.Name)
		}
	})
}
