package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scriptPart is the text of script from the line matching start through
// the first line matching end.
func scriptPart(t *testing.T, script, start, end string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../scripts", script))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := regexp.MustCompile(`(?m)` + start).FindStringIndex(s)
	if i == nil {
		t.Fatalf("scripts/%s has no %q", script, start)
	}
	j := regexp.MustCompile(`(?m)` + end).FindStringIndex(s[i[0]:])
	if j == nil {
		t.Fatalf("scripts/%s has no %q after %q", script, end, start)
	}
	return s[i[0] : i[0]+j[1]]
}

func bash(t *testing.T, script string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out, err := exec.Command("bash", "-c", script).CombinedOutput()
	return string(out), err
}

// TestScriptsTestEndsWithOneVerdict: ./scripts/test's last line is one
// verdict over every stage it ran (not the end-to-end stages' count),
// naming where parts were skipped, or the stage that failed, with the
// failing exit status kept.
func TestScriptsTestEndsWithOneVerdict(t *testing.T) {
	prologue := scriptPart(t, "test", `^stages=\(\)$`, `^trap .*EXIT$`)
	for _, c := range []struct {
		body, last string
		fails      bool
	}{
		{`step "gofmt"; step "go vet"; skipping "no buildah"; step "end-to-end"; echo "11 passed, 0 failed"`,
			"scripts/test: PASS — 3 stages passed (gofmt; go vet; end-to-end); with parts skipped in: go vet", false},
		{`step "gofmt"; step "go test -race"; false`, `scripts/test: FAIL in "go test -race" (exit 1) — after 1 stages passed`, true},
	} {
		out, err := bash(t, "set -euo pipefail\n"+prologue+"\n"+c.body+"\n")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if got := lines[len(lines)-1]; got != c.last || (err != nil) != c.fails {
			t.Errorf("last line %q (err %v), want %q", got, err, c.last)
		}
	}
}

// TestConformanceSummaryCountsKnownFailures: a conformance stage's note
// splits its failed checks into those its baseline lists ("known
// (baseline)") and the others ("new"), instead of "N failed" beside PASS.
func TestConformanceSummaryCountsKnownFailures(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	fn := scriptPart(t, "e2e", `^checks_summary\(\) \{$`, `^EOF\n\}$`)
	dir := t.TempDir()
	write := func(scenario, checks string) {
		if err := os.MkdirAll(filepath.Join(dir, scenario), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, scenario, "checks.json"), []byte(checks), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// as the suite names its directories: server-<scenario>-<ISO time>
	const at = "-2026-12-05T08-18-51-505Z"
	write("server-tools-call-sampling"+at, `[{"id":"tools-call-sampling","status":"FAILURE"},{"id":"a","status":"SUCCESS"}]`)
	write("server-server-sse-multiple-streams"+at, `[{"id":"server-sse-multiple-streams-session","status":"WARNING"}]`)
	write("server-tools-list"+at, `[{"id":"tools-list","status":"FAILURE"},{"id":"b","status":"WARNING"}]`)
	write("server-tasks-lifecycle"+at, `[{"id":"tasks-lifecycle","status":"FAILURE"}]`) // not scored
	// a known check of another scenario is not known here
	write("server-tools-call-elicitation-x"+at, `[{"id":"tools-call-sampling","status":"FAILURE"}]`)
	reqs := filepath.Join(t.TempDir(), "2025-11-25.yaml")
	if err := os.WriteFile(reqs, []byte("# requirements\nserver:\n  - tools-call-sampling\n  - server-sse-multiple-streams\n  - tools-list\n"+
		"  - tools-call-elicitation-x\nclient:\n  - tasks-lifecycle\nnot_scored:\n  - scenario: tasks-lifecycle\n    leg: server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	baseline, _ := filepath.Abs("../../test/e2e/baseline-2025.yml")
	out, err := bash(t, fn+"\nchecks_summary "+dir+" "+baseline+" "+reqs+"\n")
	if err != nil || !strings.Contains(out, "checks: 1 passed, 2 known (baseline), 2 new, 1 in unscored scenarios (extensions, pending), 1 warnings") ||
		strings.Contains(out, "failed") {
		t.Fatalf("summary %q (err %v)", out, err)
	}
}
