package egress_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSwitchRefusedOutsideTests: a program that is not a test binary and
// calls SetGate panics before the gate is touched.
func TestSwitchRefusedOutsideTests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	out, err := exec.Command("go", "run", "./testdata/offswitch").CombinedOutput()
	if err == nil || strings.Contains(string(out), "turned off") || !strings.Contains(string(out), "outside a test binary") {
		t.Fatalf("the switch worked outside a test binary (err %v):\n%s", err, out)
	}
}
