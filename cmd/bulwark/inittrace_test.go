package main

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// Every bulwark command links every server, so a server's package
// initialisation is start-up cost for all of them (docs/performance.md,
// "Stdio cold start"). servers/gateway's regular expressions, compiled at
// init, were about 2,600 allocations and 1–1.6 ms of every start; they are
// compiled on first use now. This budget fails if a package of ours goes
// back to heavy work at init.
func TestOurPackagesInitCheaply(t *testing.T) {
	cmd := exec.Command(binary(t), "version")
	cmd.Env = append(baseEnv(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bulwark version: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (github\.com/bulwarkmcp/bulwark/\S+) @\S+ ms, \S+ ms clock, \d+ bytes, (\d+) allocs$`)
	seen := 0
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		seen++
		if n, _ := strconv.Atoi(m[2]); n > 500 {
			t.Errorf("%s allocates %d times at init (budget 500): compile or build it on first use", m[1], n)
		}
	}
	if seen == 0 {
		t.Fatalf("no init lines of ours in GODEBUG=inittrace=1 output:\n%.2000s", out)
	}
}
