package gateway

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

// resolveReference is an independent resolution of an absolute path, for
// FuzzCanonicalPath: a stack of names, ".." popping one; above reports a
// ".." that would climb above "/".
func resolveReference(p string) (out string, above bool) {
	var stack []string
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(stack) == 0 {
				return "", true
			}
			stack = stack[:len(stack)-1]
		default:
			stack = append(stack, s)
		}
	}
	return "/" + strings.Join(stack, "/"), false
}

// FuzzCanonicalPath: a canonical path is absolute, clean and its own
// canonical form; it never climbs above "/"; and it is the path a
// reference resolution gives, so a policy's `like "/a/*"` decides the same
// on it as on the path the upstream would open.
func FuzzCanonicalPath(f *testing.F) { // seeds: testdata/fuzz/FuzzCanonicalPath
	f.Fuzz(func(t *testing.T, p string) {
		out, err := canonicalPath(p)
		ref, above := "", false
		if strings.HasPrefix(p, "/") {
			ref, above = resolveReference(p)
		}
		if err != nil {
			return
		}
		switch {
		case !strings.HasPrefix(out, "/"):
			t.Fatalf("%q -> %q: not absolute", p, out)
		case path.Clean(out) != out:
			t.Fatalf("%q -> %q: not clean", p, out)
		case above:
			t.Fatalf("%q -> %q: climbs above / and was not refused", p, out)
		case out != ref:
			t.Fatalf("%q -> %q, the reference resolution %q", p, out, ref)
		case strings.HasPrefix(out, "/a/") != strings.HasPrefix(ref, "/a/"):
			t.Fatalf("%q: like \"/a/*\" decides %q and %q apart", p, out, ref)
		}
		if again, err := canonicalPath(out); err != nil || again != out {
			t.Fatalf("%q -> %q -> %q, %v: not idempotent", p, out, again, err)
		}
	})
}

// FuzzCanonicalURL: a canonical URL is its own canonical form, parses with
// net/url to the same scheme and host without user information, and its
// path holds no dot segment and no lower-case percent-encoding.
func FuzzCanonicalURL(f *testing.F) { // seeds: testdata/fuzz/FuzzCanonicalURL
	f.Fuzz(func(t *testing.T, s string) {
		out, err := canonicalURL(s)
		if err != nil {
			return
		}
		again, err := canonicalURL(out)
		if err != nil || again != out {
			t.Fatalf("%q -> %q -> %q, %v: not idempotent", s, out, again, err)
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("%q -> %q: net/url refuses it: %v", s, out, err)
		}
		if u.User != nil || u.Scheme != strings.ToLower(u.Scheme) || u.Host != strings.ToLower(u.Host) {
			t.Fatalf("%q -> %q: user %v, scheme %q, host %q", s, out, u.User, u.Scheme, u.Host)
		}
		p := u.EscapedPath()
		for _, seg := range strings.Split(p, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("%q -> %q: a dot segment is left", s, out)
			}
		}
		for i := strings.IndexByte(p, '%'); i >= 0 && i+2 < len(p); i = strings.IndexByte(p[i+1:], '%') + i + 1 {
			if strings.ToUpper(p[i:i+3]) != p[i:i+3] {
				t.Fatalf("%q -> %q: a lower-case percent-encoding is left", s, out)
			}
			if strings.IndexByte(p[i+1:], '%') < 0 {
				break
			}
		}
	})
}

// TestCanonicalBudget: a value over its limit is refused before it is
// read, and the longest value allowed, made of dot segments, costs a
// handful of allocations, not one per segment.
func TestCanonicalBudget(t *testing.T) {
	huge := strings.Repeat("a/", 1<<20)
	hugePath, hugeURL := "/"+huge, "https://x/"+huge
	dotPath := strings.Repeat("/a/..", maxPathBytes/5)
	dotURL := "https://x" + strings.Repeat("/a/%2E%2e", maxURLBytes/10)
	for name, f := range map[string]func(){
		"huge path": func() { _, _ = canonicalPath(hugePath) },
		"huge url":  func() { _, _ = canonicalURL(hugeURL) },
		"dot path":  func() { _, _ = canonicalPath(dotPath) },
		"dot url":   func() { _, _ = canonicalURL(dotURL) },
	} {
		if n := testing.AllocsPerRun(5, f); n > 8 {
			t.Errorf("%s: %.0f allocations", name, n)
		}
	}
}
