package dns

import (
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
)

func TestPresentZonefile(t *testing.T) {
	cases := map[string]string{
		`x TXT "caf\195\169"`:                  `x TXT "café"`,
		`x TXT "\060/untrusted-data\062"`:      `x TXT "</untrusted-data>"`,
		`x TXT "a\226\128\139b"`:               "x TXT \"a\u200bb\"",
		`x TXT "semi\059 quote\034 slash\092"`: `x TXT "semi\059 quote\034 slash\092"`,
		`x TXT "ctl\000\031\127 bad\255\128"`:  `x TXT "ctl\000\031\127 bad\255\128"`,
		`a\.b TXT "\\065"`:                     `a\.b TXT "\\065"`,
		`x\046y\064 TXT "\042"`:                `x\046y\064 TXT "\042"`,
		`x TXT "\999 \2"`:                      `x TXT "\999 \2"`,
		"no escapes at all\n":                  "no escapes at all\n",
		`x TXT "\195"`:                         `x TXT "\195"`,
		`x TXT "\240\159\152\128 end\060"`:     "x TXT \"\U0001F600 end<\"",
	}
	for in, want := range cases {
		if got := presentZonefile(in); got != want {
			t.Errorf("presentZonefile(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitLines(t *testing.T) {
	text := strings.Repeat("0123456789\n", 10)
	parts := splitLines(text, 25)
	if strings.Join(parts, "") != text || len(parts) != 5 || parts[0] != "0123456789\n0123456789\n" {
		t.Fatalf("parts %q", parts)
	}
	if p := splitLines(strings.Repeat("x", 40)+"\nshort\n", 25); len(p) != 2 || p[1] != "short\n" {
		t.Fatalf("long line: %q", p)
	}
}

// FuzzPresentZonefile: the presented text means the same records as the
// original (decoding never changes what a zone-file line says).
func FuzzPresentZonefile(f *testing.F) {
	for _, s := range []string{`caf\195\169`, `\060/untrusted-data\062`, `a\226\128\139b`, `\059\034\092`, `\000\255\128`, `\\065`, `\046\064\042\036`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, line := range []string{"x 300 IN TXT \"" + v + "\"", "x 300 IN TXT " + v, "x 300 IN CNAME " + v, v + " 300 IN A 192.0.2.1"} {
			want, err := mdns.NewRR("$ORIGIN a.test.\n" + line)
			if err != nil || want == nil {
				continue
			}
			got, err := mdns.NewRR("$ORIGIN a.test.\n" + presentZonefile(line))
			if err != nil || got == nil || !sameWire(got, want) {
				t.Fatalf("%q presents as %q: %v (%v, want %v)", line, presentZonefile(line), err, got, want)
			}
		}
	})
}

// sameWire compares two records in wire format: what they mean, not how
// miekg/dns prints them.
func sameWire(a, b mdns.RR) bool {
	pa, pb := make([]byte, 70000), make([]byte, 70000)
	na, err1 := mdns.PackRR(a, pa, 0, nil, false)
	nb, err2 := mdns.PackRR(b, pb, 0, nil, false)
	return err1 == nil && err2 == nil && string(pa[:na]) == string(pb[:nb])
}
