package authz_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

func setOf(tag string) string {
	return `@id("` + tag + `1") permit(principal, action == Action::"get_zone", resource);
@id("` + tag + `2") permit(principal, action == Action::"get_zone", resource);
`
}

func write(t testing.TB, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

var get = authz.Request{Principal: authz.Principal{ID: "x"}, Action: "get_zone", Resource: zone("a.example"), Arguments: map[string]any{"zone": "a.example"}}

// TestReloadUnderLoad: while callers decide without pause, the policy file
// is swapped back and forth and broken in between. Every decision is made
// by one whole set (both of its policies, never one of each), and a broken
// file changes nothing.
func TestReloadUnderLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.cedar")
	write(t, path, setOf("a"))
	a, err := authz.New(model(t), authz.Config{PolicyFile: path})
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Int64
	seen := [2]atomic.Int64{}
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				d := a.Decide(get)
				switch strings.Join(d.Policies, ",") {
				case "a1,a2":
					seen[0].Add(1)
				case "b1,b2":
					seen[1].Add(1)
				default:
					bad.Add(1)
				}
			}
		})
	}
	for i := range 50 {
		tag := "b"
		if i%2 == 1 {
			tag = "a"
		}
		write(t, path, setOf(tag))
		if err := a.Reload(); err != nil {
			t.Fatal(err)
		}
		write(t, path, `permit(principal, action == Action::"get_zone"`) // broken
		if err := a.Reload(); err == nil {
			t.Fatal("a broken file was accepted")
		}
		if got := strings.Join(a.Decide(get).Policies, ","); got != tag+"1,"+tag+"2" {
			t.Fatalf("after a broken file, decided by %q, want the previous set %s", got, tag)
		}
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() != 0 || seen[0].Load() == 0 || seen[1].Load() == 0 {
		t.Fatalf("decisions by a mixed set: %d; by a: %d, by b: %d", bad.Load(), seen[0].Load(), seen[1].Load())
	}
}

// TestWatch: a changed file is picked up by the poll, a signal reloads,
// and a broken file keeps the set in force.
func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.cedar")
	write(t, path, setOf("a"))
	a, err := authz.New(model(t), authz.Config{PolicyFile: path})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { a.Watch(ctx, authz.WatchOptions{Interval: 5 * time.Millisecond, Signals: sig}); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for strings.Join(a.Decide(get).Policies, ",") != want {
			if time.Now().After(deadline) {
				t.Fatalf("the set in force never became %s", want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	write(t, path, setOf("b"))
	waitFor("b1,b2")
	write(t, path, "not cedar")
	time.Sleep(50 * time.Millisecond)
	sig <- os.Interrupt
	time.Sleep(20 * time.Millisecond)
	waitFor("b1,b2")
	write(t, path, setOf("a"))
	sig <- os.Interrupt
	waitFor("a1,a2")
}

// TestNewRefusesBrokenFile: startup stops on a file that does not load.
func TestNewRefusesBrokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.cedar")
	write(t, path, `permit(principal, action == Action::"drop_zone", resource);`)
	if _, err := authz.New(model(t), authz.Config{PolicyFile: path}); err == nil || !strings.Contains(err.Error(), "drop_zone") {
		t.Fatalf("err = %v, want it to name the unknown tool", err)
	}
	if _, err := authz.New(model(t), authz.Config{PolicyFile: filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("a missing file was accepted")
	}
	big := filepath.Join(dir, "big.cedar")
	write(t, big, strings.Repeat(" ", authz.MaxFileSizeForTest+1))
	if _, err := authz.New(model(t), authz.Config{PolicyFile: big}); err == nil {
		t.Fatal("an oversized file was accepted")
	}
}
