package taint

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// RunAll runs run for every encoding of Run(), as parallel subtests of t,
// and returns the union of the fields whose hostile values reached a
// client (visited) and of the fields given one (tainted); all says every
// encoding ran, which a coverage table needs.
func RunAll(t *testing.T, run func(*testing.T, Encoding) (visited, tainted map[string]bool)) (visited, tainted map[string]bool, all bool) {
	var mu sync.Mutex
	visited, tainted = map[string]bool{}, map[string]bool{}
	ran := 0
	t.Run("encodings", func(t *testing.T) {
		for _, enc := range Run() {
			t.Run(enc.Name, func(t *testing.T) {
				t.Parallel()
				v, tf := run(t, enc)
				mu.Lock()
				defer mu.Unlock()
				maps.Copy(visited, v)
				maps.Copy(tainted, tf)
				ran++
			})
		}
	})
	return visited, tainted, ran == len(Encodings)
}

// Report fails t on each of c's findings, but the secret in a form enc
// marks a documented limit, which it counts in a log line.
func Report(t *testing.T, enc Encoding, c *Checker) {
	t.Helper()
	n := 0
	for _, fd := range c.Findings {
		if enc.Limit && strings.HasPrefix(fd.Problem, "the secret") {
			n++
			continue
		}
		t.Errorf("%s", fd)
	}
	if n > 0 {
		t.Logf("documented limit %q: %d string(s) carried the secret's %s form to a client", enc.Name, n, enc.Name)
	}
}

// CheckCoverage compares a server harness's coverage with its golden
// testdata/taint-coverage.txt (UPDATE_GOLDEN=1 writes it): each field
// given a hostile value, and whether the value reached a client (then
// cleaned and scrubbed) or the server did not pass it on. At least least
// fields must have reached a client. server names the harness and run the
// go test arguments that regenerate it.
func CheckCoverage(t *testing.T, server, run string, least int, tainted, visited map[string]bool) {
	t.Helper()
	var table []string
	reached := 0
	for f := range tainted {
		status := "dropped"
		if visited[f] {
			status = "reached"
			reached++
		}
		table = append(table, fmt.Sprintf("%-7s %s", status, f))
	}
	slices.Sort(table)
	if reached < least {
		t.Errorf("only %d tainted fields reached a client, want at least %d", reached, least)
	}
	mcptest.GoldenFile(t, "testdata/taint-coverage.txt", "# The "+server+" taint harness's coverage: each upstream field given a hostile value,\n"+
		"# and whether it reached a client (then cleaned and scrubbed) or the server did not pass it on.\n"+
		"# Regenerate with UPDATE_GOLDEN=1 go test "+run+".\n"+strings.Join(table, "\n")+"\n")
}

// Versions are the protocol versions every harness's clients speak.
var Versions = []string{"2025-11-25", "2026-07-28"}

// Server is a server harness's test: run in every encoding (RunAll), then
// its coverage against the golden (CheckCoverage, when every encoding
// ran). It skips under -short.
func Server(t *testing.T, server, regenerate string, least int, run func(*testing.T, Encoding) (visited, tainted map[string]bool)) {
	if testing.Short() {
		t.Skip("the taint harness runs every encoding")
	}
	visited, tainted, all := RunAll(t, run)
	if t.Failed() || !all {
		return // the coverage is of every encoding's run
	}
	CheckCoverage(t, server, regenerate, least, tainted, visited)
}
