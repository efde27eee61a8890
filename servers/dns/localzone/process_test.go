package localzone

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// Child processes: the test binary re-executed with one test selected and
// these variables set.
const (
	envChildDir  = "LOCALZONE_CHILD_DIR"
	envChildName = "LOCALZONE_CHILD_NAME"
	envChildN    = "LOCALZONE_CHILD_N"
	envChildSync = "LOCALZONE_CHILD_SYNC"
)

func startChild(t *testing.T, test string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// TestWriterChild adds "<name>-<i>" TXT values to seq.crash.test, one per
// mutation, continuing after what the RRSet holds, printing "ok <i>" after
// each mutation returned. It runs until killed or N values are written.
func TestWriterChild(t *testing.T) {
	dir := os.Getenv(envChildDir)
	if dir == "" {
		t.Skip("helper process")
	}
	p, err := New(dir, &Options{DisableSync: os.Getenv(envChildSync) == ""})
	if err != nil {
		t.Fatal(err)
	}
	name := os.Getenv(envChildName)
	n, _ := strconv.Atoi(os.Getenv(envChildN))
	start := 0
	if s, err := p.GetRRSet(bg, "crash.test", "seq", "TXT"); err == nil {
		start = len(s.Records)
	}
	for i := start; n == 0 || i < start+n; i++ {
		v := fmt.Sprintf(`"%s-%d"`, name, i)
		if _, err := p.AddRecords(bg, "crash.test", "seq", "TXT", recs(v), nil); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("ok %d\n", i)
	}
}

// TestCrashSafety kills a writing process with SIGKILL at random moments
// and checks that what is left is a whole, parseable zone holding exactly
// a prefix of the writes: every acknowledged one, and at most the one in
// flight.
func TestCrashSafety(t *testing.T) {
	dir := t.TempDir()
	p, _ := newTestProvider(t, dir)
	mustZone(t, p, "crash.test")
	acked := 0
	for round := range 8 {
		cmd, out := startChild(t, "TestWriterChild", envChildDir+"="+dir, envChildName+"=w", envChildSync+"=1")
		lines := make(chan int, 1000)
		go func() {
			for out.Scan() {
				if i, err := strconv.Atoi(strings.TrimPrefix(out.Text(), "ok ")); err == nil {
					lines <- i
				}
			}
			close(lines)
		}()
		// Let a few writes land, then kill at a random point of the next ones.
		for got := 0; got < 3; got++ {
			select {
			case i := <-lines:
				acked = i + 1
			case <-time.After(10 * time.Second):
				t.Fatal("child wrote nothing")
			}
		}
		time.Sleep(time.Duration(rand.IntN(5_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for i := range lines {
			acked = i + 1
		}
		_ = cmd.Wait()
		checkPrefix(t, dir, "w", acked, round)
		if tmp, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(tmp) != 0 {
			t.Fatalf("round %d: temporary files survived New: %v", round, tmp)
		}
	}
}

// checkPrefix opens dir afresh and checks the zone holds w-0 .. w-(k-1)
// with acked <= k <= acked+1, and that the directory still takes writes.
func checkPrefix(t *testing.T, dir, name string, acked, round int) {
	t.Helper()
	p, _ := newTestProvider(t, dir)
	if _, err := p.GetZone(bg, "crash.test"); err != nil {
		t.Fatalf("round %d: zone unreadable after kill: %v", round, err)
	}
	s, err := p.GetRRSet(bg, "crash.test", "seq", "TXT")
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	k := len(s.Records)
	for i, r := range s.Records {
		if r.Value != fmt.Sprintf(`"%s-%d"`, name, i) {
			t.Fatalf("round %d: record %d = %s: not a prefix of the writes", round, i, r.Value)
		}
	}
	if k < acked || k > acked+1 {
		t.Fatalf("round %d: %d records after %d acknowledged writes", round, k, acked)
	}
	if _, err := p.ListActions(bg, dns.ListActionsOptions{Zone: "crash.test"}); err != nil {
		t.Fatalf("round %d: sidecar unreadable: %v", round, err)
	}
	t.Logf("round %d: %d writes acknowledged, %d in the zone", round, acked, k)
}

// TestTwoProcessesNoLostUpdate runs two writers on one directory at once;
// every write of both must be in the zone.
func TestTwoProcessesNoLostUpdate(t *testing.T) {
	dir := t.TempDir()
	p, _ := newTestProvider(t, dir)
	mustZone(t, p, "crash.test")
	const n = 25
	var cmds []*exec.Cmd
	for _, name := range []string{"a", "b"} {
		cmd, out := startChild(t, "TestWriterChild", envChildDir+"="+dir, envChildName+"="+name, envChildN+"="+strconv.Itoa(n))
		go func() {
			for out.Scan() {
			}
		}()
		cmds = append(cmds, cmd)
	}
	// This process writes too, through its own Provider.
	for i := range n {
		if _, err := p.AddRecords(bg, "crash.test", "seq", "TXT", recs(fmt.Sprintf(`"c-%d"`, i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	s, err := p.GetRRSet(bg, "crash.test", "seq", "TXT")
	if err != nil {
		t.Fatal(err)
	}
	got := values(s)
	// Each writer starts numbering after what it saw, so count per writer.
	for _, name := range []string{"a", "b", "c"} {
		c := 0
		for _, v := range got {
			if strings.HasPrefix(v, `"`+name+"-") {
				c++
			}
		}
		if c != n {
			t.Errorf("writer %s: %d of %d writes in the zone", name, c, n)
		}
	}
	l, _ := p.ListActions(bg, dns.ListActionsOptions{Zone: "crash.test", PerPage: 50, Sort: []string{"id"}})
	ids := make([]int64, 0, len(l.Actions))
	for _, a := range l.Actions {
		ids = append(ids, a.ID)
	}
	if *l.Pagination.TotalEntries != 3*n+1 || slices.Compact(slices.Clone(ids)) == nil || len(slices.Compact(ids)) != len(l.Actions) {
		t.Errorf("actions: %d total, ids %v", *l.Pagination.TotalEntries, ids)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}
