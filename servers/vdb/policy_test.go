package vdb_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/tooltable"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

var read = mcptest.Policy{ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"}

// policyTable: the 27 data tools and vdb_request read-only (the security
// page's "Read-only by declaration"); the two sign-in tools neither
// read-only nor destructive; sign-out deletes this server's copy of a key.
var policyTable = map[string]mcptest.Policy{
	"vdb_vuln": read, "vdb_timeline": read, "vdb_affected": read, "vdb_fixes": read, "vdb_remediation_plan": read,
	"vdb_workarounds": read, "vdb_advisories": read, "vdb_cwe_guidance": read, "vdb_scorecard": read,
	"vdb_kev_status": read, "vdb_kev_list": read, "vdb_exploits": read, "vdb_exploit_search": read, "vdb_iocs": read,
	"vdb_sightings": read, "vdb_detection_rules": read, "vdb_attack_techniques": read, "vdb_vex": read,
	"vdb_triage": read, "vdb_package_search": read, "vdb_package": read, "vdb_package_vulns": read,
	"vdb_product": read, "vdb_eol": read, "vdb_identifiers": read, "vdb_catalog": read, "vdb_trends": read,
	"vdb_request":     read,
	"vdb_auth_start":  {ReadOnly: false, Destructive: false, Idempotent: false, OpenWorld: true, Gate: "never"},
	"vdb_auth_poll":   {ReadOnly: false, Destructive: false, Idempotent: false, OpenWorld: true, Gate: "never"},
	"vdb_auth_logout": {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: false, Gate: "never"},
}

func declared(t *testing.T) []kernel.Tool {
	t.Helper()
	s, err := seal.New(testMaster, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := vdb.New(vdb.Config{}, vdb.Deps{Sealer: s})
	if err != nil {
		t.Fatal(err)
	}
	return srv.Tools()
}

func TestPolicies(t *testing.T) { mcptest.CheckPolicies(t, declared(t), policyTable) }

func TestAnnotationsAllStated(t *testing.T) {
	f := newFixture(t, setup{})
	mcptest.CheckAnnotations(t, f.sess, policyTable)
}

// TestNoCredentialInAnySchema: no tool takes a credential as an argument
// (the security page: it would sit in the advertised schema).
func TestNoCredentialInAnySchema(t *testing.T) {
	f := newFixture(t, setup{})
	for _, tool := range mcptest.Tools(t, f.sess) {
		b, _ := json.Marshal(tool.InputSchema)
		s := strings.ToLower(string(b))
		for _, w := range []string{"apikey", "api_key", "authorization", "token", "bearer", "password", "secret", "credential"} {
			if strings.Contains(s, "\""+w) {
				t.Errorf("%s: the schema names %q: %s", tool.Name, w, b)
			}
		}
	}
}

// TestNoSealNoSignIn: without MCP_AEAD_KEY the sign-in tools do not exist.
func TestNoSealNoSignIn(t *testing.T) {
	f := newFixture(t, setup{noSeal: true})
	for _, n := range mcptest.ToolNames(t, f.sess) {
		if strings.HasPrefix(n, "vdb_auth") {
			t.Errorf("%s registered without a sealing key", n)
		}
	}
	if got := len(mcptest.ToolNames(t, f.sess)); got != 28 {
		t.Errorf("%d tools, want 27 data tools and vdb_request", got)
	}
}

const snapDir = "testdata/toolsnaps"

// TestToolSnapshots pins each tool's advertised tools/list entry.
// UPDATE_GOLDEN=1 rewrites the files.
func TestToolSnapshots(t *testing.T) {
	f := newFixture(t, setup{})
	mcptest.ToolSnapshots(t, f.sess, snapDir)
}

const toolDoc = "../../docs/tools-vdb.md"

func TestToolTable(t *testing.T) {
	got := "<!-- Generated from servers/vdb (kernel/tooltable.Markdown over Server.Tools); do not edit.\n" +
		"     Regenerate: UPDATE_GOLDEN=1 go test ./servers/vdb -run TestToolTable -->\n\n" +
		"# `bulwark vdb` tools\n\n" + tooltable.Markdown(declared(t)) + "\n" +
		"Every data tool and `vdb_request` is read-only and talks to the VDB API; everything they return arrives inside " +
		"an untrusted-data envelope, with `cacheScope: private`. The sign-in tools exist only when `MCP_AEAD_KEY` is set.\n\n" +
		"An argument that becomes a URL path segment (`ecosystem`, `name`, `group`, `package`, `product`, `release`, " +
		"`version`, `date`) follows its own grammar: ecosystems from a fixed list; an npm `@scope/name` as two segments; " +
		"a Go module or Composer name keeps its slashes, each part checked; dot segments (also percent-encoded), `/`, `;`, " +
		"`\\`, `%` and control characters refused with `invalid_argument`. Every request's final URL is checked once more, " +
		"decoded, against the same route rule as `vdb_request` (TestPathSegmentProbes, TestFinalURLCheckedOnEveryRequest). " +
		"One call takes at most `--call-timeout` (`BULWARK_VDB_CALL_TIMEOUT`, 45 s by default), every attempt and every " +
		"wait before a retry included (TestCallDeadline).\n"
	mcptest.GoldenFile(t, toolDoc, got)
	for name := range policyTable {
		if !strings.Contains(got, "| `"+name+"` |") {
			t.Errorf("%s missing from the table", name)
		}
	}
}
