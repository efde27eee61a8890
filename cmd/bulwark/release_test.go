package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// scripts/release in its one-target mode (what CI runs) builds a static
// binary whose `bulwark version` shows the stamped version and commit, and
// a checksum file that matches it.
func TestReleaseOneTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release binary; skipped with -short")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out := t.TempDir()
	target := runtime.GOOS + "/" + runtime.GOARCH
	cmd := exec.Command("bash", "../../scripts/release", "-target", target, "-version", "v9.8.7-test", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}
	name := "bulwark_v9.8.7-test_" + runtime.GOOS + "_" + runtime.GOARCH
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	v, err := exec.Command(filepath.Join(out, name), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	if !strings.HasPrefix(string(v), "bulwark v9.8.7-test (commit ") || !strings.Contains(string(v), strings.TrimSpace(string(commit))) {
		t.Fatalf("bulwark version: %q (HEAD %s)", v, commit)
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil || !strings.Contains(string(sums), "  "+name+"\n") {
		t.Fatalf("SHA256SUMS: %q %v", sums, err)
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = out
	if b, err := check.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, b)
	}
	if runtime.GOOS == "linux" {
		// Static: no program interpreter (dynamic loader) is named.
		if b, err := os.ReadFile(filepath.Join(out, name)); err == nil && strings.Contains(string(b[:min(len(b), 4096)]), "ld-linux") {
			t.Error("the binary is dynamically linked")
		}
	}
}
