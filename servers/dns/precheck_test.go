package dns_test

import (
	"regexp"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// TestNoTokenForCallsThatCannotRun: a gated call that would surely fail is
// refused by its first call with the error itself, never with a token the
// person would approve in vain (issue 10.11). Each case got a token before
// the preview checked the parse and the preconditions.
func TestNoTokenForCallsThatCannotRun(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		var zf string
		f := newFixture(t, mk, setup{before: func(b backend) {
			standard(t)(b)
			seedZone(t, b, "example.org")
			protectZone(t, b, "example.org")
			var err error
			if zf, err = b.p.ExportZonefile(ctx(), "example.com"); err != nil {
				t.Fatal(err)
			}
		}})
		noNS := regexp.MustCompile(`(?m)^@?\s.*\sNS\s.*$`).ReplaceAllString(zf, "")
		imports := map[string]string{
			"$INCLUDE":       zf + "$INCLUDE /etc/passwd\n",
			"syntax error":   zf + "www2 IN A not-an-address\n",
			"no NS":          noNS,
			"explicit TTL 0": zf + "zero 0 IN A 192.0.2.1\n",
			"$ORIGIN other":  "$ORIGIN example.net.\n" + zf,
			"over budget":    zf + "$GENERATE 0-65535 g$ TXT x\n$GENERATE 0-65535 h$ TXT x\n$GENERATE 0-65535 i$ TXT x\n$GENERATE 0-65535 j$ TXT x\n",
		}
		if noNS == zf {
			t.Fatalf("the export holds no NS line to drop:\n%s", zf)
		}
		for name, text := range imports {
			t.Run(name, func(t *testing.T) {
				f.fails(t, "import_zonefile", map[string]any{"zone": "example.com", "zonefile": text}, kernel.InvalidArgument)
			})
		}
		f.fails(t, "delete_zone", map[string]any{"zone": "example.org"}, kernel.FailedPrecondition)
		ns := map[string]any{"zone": "example.com", "primary_nameservers": []any{map[string]any{"address": "198.51.100.5"}}}
		f.fails(t, "change_primary_nameservers", ns, kernel.FailedPrecondition)

		// A call that can run still gets its token, and runs.
		imp := map[string]any{"zone": "example.com", "zonefile": zf}
		tok := token(t, f.call(t, "import_zonefile", imp))
		f.ok(t, "import_zonefile", with(imp, "confirmToken", tok), nil)
	})
}
