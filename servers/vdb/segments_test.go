package vdb_test

import (
	"fmt"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
)

// segmentProbes are arguments that would become path segments and climb
// or smuggle out of their route: dot segments plain and percent-encoded
// (once and twice), slashes, semicolons, backslashes, control characters,
// and names that turn a route into a denied one.
var segmentProbes = []struct {
	tool string
	args map[string]any
}{
	{"vdb_package", map[string]any{"ecosystem": "npm", "name": "../../v2/auth/token"}},
	{"vdb_package", map[string]any{"ecosystem": "exploits", "name": "CVE-2024-1/poc"}},
	{"vdb_package", map[string]any{"ecosystem": "raw", "name": "nvd/CVE-2021-44228"}},
	{"vdb_package", map[string]any{"ecosystem": "cli.sca", "name": "x"}},
	{"vdb_package", map[string]any{"ecosystem": "npm", "name": "%2e%2e"}},
	{"vdb_package", map[string]any{"ecosystem": "npm", "name": "%252e%252e"}},
	{"vdb_package", map[string]any{"ecosystem": "npm", "name": "left-pad;"}},
	{"vdb_package", map[string]any{"ecosystem": "npm", "name": `a\..\auth`}},
	{"vdb_package", map[string]any{"ecosystem": "npm", "name": "@../auth"}},
	{"vdb_package", map[string]any{"ecosystem": "npm", "name": "@scope/../../auth/token"}},
	{"vdb_package", map[string]any{"ecosystem": "maven", "group": "..", "name": "x"}},
	{"vdb_package", map[string]any{"ecosystem": "maven", "group": "../../auth", "name": "token"}},
	{"vdb_package", map[string]any{"ecosystem": "go", "name": "golang.org/../../../auth/token"}},
	{"vdb_package", map[string]any{"ecosystem": "pypi", "name": "x\u0000y"}},
	{"vdb_package_vulns", map[string]any{"package": "../auth/token"}},
	{"vdb_package_vulns", map[string]any{"package": "..%2fauth"}},
	{"vdb_package_vulns", map[string]any{"package": "cli.sca"}},
	{"vdb_package_vulns", map[string]any{"package": "exploits/x/poc"}},
	{"vdb_package_vulns", map[string]any{"package": "x;"}},
	{"vdb_eol", map[string]any{"ecosystem": "npm", "package": "../../../auth/token", "version": "1"}},
	{"vdb_eol", map[string]any{"product": "../../exploits/x/poc"}},
	{"vdb_eol", map[string]any{"product": "nodejs", "release": "../../../auth/token"}},
	{"vdb_eol", map[string]any{"ecosystem": "npm", "package": "x", "version": "../../../../auth"}},
	{"vdb_eol", map[string]any{"ecosystem": "../auth", "package": "x", "version": "1"}},
	{"vdb_product", map[string]any{"name": "../exploits/CVE-2024-1/poc"}},
	{"vdb_product", map[string]any{"name": "log4j", "version": "../../auth/token"}},
	{"vdb_product", map[string]any{"name": "log4j", "version": "2.0", "ecosystem": "../../auth"}},
	{"vdb_product", map[string]any{"name": "%2E%2E", "version": "x"}},
	{"vdb_trends", map[string]any{"feed": "msrc", "date": "../../auth/token"}},
	{"vdb_trends", map[string]any{"feed": "msrc", "date": "2024-01-09/../../../auth"}},
	{"vdb_request", map[string]any{"path": "/exploits/x/poc;"}},
	{"vdb_request", map[string]any{"path": "/exploits/x/poc%3B"}},
	{"vdb_request", map[string]any{"path": "/exploits/x/POC"}},
	{"vdb_request", map[string]any{"path": "/npm/..%2f..%2fauth"}},
}

// TestPathSegmentProbes: every probe is refused with invalid_argument and
// the fake, which records every path it receives, receives nothing.
func TestPathSegmentProbes(t *testing.T) {
	f := newFixture(t, setup{})
	for _, p := range segmentProbes {
		t.Run(fmt.Sprintf("%s %v", p.tool, p.args), func(t *testing.T) {
			f.fake.ResetRequests()
			f.fails(t, p.tool, p.args, kernel.InvalidArgument)
			for _, r := range f.fake.Requests() {
				t.Errorf("the probe reached the API: %s %s", r.Method, r.Path)
			}
		})
	}
}

// TestPathSegmentsThatAreFine: the forms the grammars accept reach the
// route they name, as the fake records it: an npm scope as its own
// segment, a Go module path as one escaped segment (as the CLI sends it),
// a Maven group and artifact, a date.
func TestPathSegmentsThatAreFine(t *testing.T) {
	f := newFixture(t, setup{})
	f.fake.AddVuln(vdbapi.Vuln{ID: "CVE-2099-0001", Severity: "LOW",
		Affected: []vdbapi.Affected{{Ecosystem: "npm", Package: "@scope/pkg", Introduced: "1.0.0"}}})
	for _, tc := range []struct {
		tool string
		args map[string]any
		path string
	}{
		{"vdb_package", map[string]any{"ecosystem": "npm", "name": "@scope/pkg"}, "/v2/npm/@scope/pkg"},
		{"vdb_package", map[string]any{"ecosystem": "npm", "name": "left-pad", "versions": true}, "/v2/npm/left-pad/versions"},
		{"vdb_package", map[string]any{"ecosystem": "go", "name": "golang.org/x/net"}, "/v2/go/golang.org%2Fx%2Fnet"},
		{"vdb_package", map[string]any{"ecosystem": "maven", "group": "org.apache.logging.log4j", "name": "log4j-core"},
			"/v2/maven/org.apache.logging.log4j/log4j-core"},
		{"vdb_package_vulns", map[string]any{"package": "xz-utils"}, "/v2/xz-utils/vulns"},
		{"vdb_eol", map[string]any{"ecosystem": "npm", "package": "@scope/pkg", "version": "1.0.0"},
			"/v2/eol/packages/npm/@scope%2Fpkg/versions/1.0.0"},
		{"vdb_eol", map[string]any{"product": "nodejs", "release": "18"}, "/v2/eol/products/nodejs/releases/18"},
		{"vdb_product", map[string]any{"name": "log4j", "version": "2.14.1", "ecosystem": "maven"}, "/v2/product/log4j/2.14.1/maven"},
		{"vdb_trends", map[string]any{"feed": "msrc", "date": "2024-01-09"}, "/v2/msrc/patch-tuesday/2024-01-09"},
	} {
		f.fake.ResetRequests()
		f.call(t, tc.tool, tc.args) // the fake may answer 404; the path is what matters
		reqs := f.fake.Requests()
		if len(reqs) != 1 || reqs[0].Path != tc.path {
			t.Errorf("%s %v: upstream requests %+v, want one GET %s", tc.tool, tc.args, reqs, tc.path)
		}
	}
	f.ok(t, "vdb_package", map[string]any{"ecosystem": "npm", "name": "@scope/pkg"})
}
