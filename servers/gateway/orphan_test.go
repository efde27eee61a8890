//go:build linux

package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// parentVar makes the re-executed test binary a gateway process that
// starts the fake upstream and waits to be killed.
const parentVar = "BULWARK_TEST_GATEWAY_PARENT"

// pidFileVar, when set, gives that gateway the setsid upstream, whose
// grandchild writes its pid there.
const pidFileVar = "BULWARK_TEST_GATEWAY_PIDFILE"

func init() {
	if os.Getenv(parentVar) != "1" {
		return
	}
	u := fakeUpstream()
	if pf := os.Getenv(pidFileVar); pf != "" {
		u = setsidUpstream(nil, pf)
	}
	u.Env = append(u.Env, mcpupstream.StubbornVar)
	u.PublicEnv = append(u.PublicEnv, mcpupstream.StubbornVar)
	getenv := func(n string) string {
		if n == mcpupstream.StubbornVar {
			return "1"
		}
		return testEnv(n)
	}
	gw, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Deps{Getenv: getenv})
	if err == nil {
		err = gw.Start(context.Background())
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			out = append(out, n)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// A gateway killed with SIGKILL (no chance to clean up) leaves no child
// behind, even one that does not exit when its stdin closes: the kernel ends
// it (parent-death signal).
func TestKilledGatewayLeavesNoOrphan(t *testing.T) {
	killedGateway(t, "")
}

// killedGateway starts a gateway process (with the setsid upstream if
// pidFile is set), waits for it to be ready, and kills it with SIGKILL.
// It returns the gateway's children as they were.
func killedGateway(t *testing.T, pidFile string) []int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), parentVar+"=1", pidFileVar+"="+pidFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("gateway process: %q", line)
	}
	kids := children(cmd.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("the gateway process has no child")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if pidFile != "" {
		return kids
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, k := range kids {
		for alive(k) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(k, syscall.SIGKILL)
				t.Fatalf("child %d outlived the gateway", k)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return kids
}

// A gateway killed with SIGKILL cannot kill its child's setsid grandchild
// itself; with cgroup v2 the grandchild stays in the dead gateway's upstream
// cgroup, and the next gateway to start an upstream in the same cgroup kills
// it and removes the cgroup.
func TestNextGatewayKillsAKilledGatewaysCgroup(t *testing.T) {
	if gateway.CgroupBase() == "" {
		t.Skip("no cgroup v2 here")
	}
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	killedGateway(t, pidFile)
	g := waitPid(t, pidFile)
	defer syscall.Kill(g, syscall.SIGKILL)
	if !alive(g) || !inOwnCgroup(g) {
		t.Skip("the grandchild died with the gateway or is in no cgroup of ours")
	}
	newFixture(t, options{})
	for deadline := time.Now().Add(5 * time.Second); alive(g); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild %d of a killed gateway outlived the next gateway's start", g)
		}
	}
}

// Close kills the child, and the child is reaped.
func TestCloseKillsTheChild(t *testing.T) {
	f := newFixture(t, options{})
	kids := children(os.Getpid())
	if len(kids) == 0 {
		t.Fatal("no child")
	}
	f.gw.Close()
	for _, k := range kids {
		if alive(k) {
			t.Errorf("child %d alive after Close", k)
		}
	}
}

// setsidUpstream is the fake upstream behind a shell that first starts a
// grandchild in a session of its own (setsid: out of the child's process
// group), which writes its pid to pidFile and sleeps.
func setsidUpstream(t *testing.T, pidFile string) gateway.Upstream {
	setsid, err := exec.LookPath("setsid")
	if err != nil && t != nil {
		t.Skip("no setsid:", err)
	}
	u := fakeUpstream()
	script := `"$1" /bin/sh -c 'echo $$ > "$0"; exec sleep 300' "$2" </dev/null >/dev/null 2>&1 &
exec "$3"`
	u.Command, u.Args = "/bin/sh", []string{"-c", script, "sh", setsid, pidFile, os.Args[0]}
	return u
}

// waitPid reads the pid the grandchild wrote.
func waitPid(t *testing.T, file string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			return n
		}
	}
	t.Fatal("the grandchild never started")
	return 0
}

// A grandchild that leaves the child's process group and session (setsid)
// does not outlive the gateway: in the child's cgroup (cgroup v2) or, where
// there is none, in the tree of a gateway that is a child subreaper.
func TestSetsidGrandchildDiesWithTheGateway(t *testing.T) {
	for _, mode := range []string{"cgroup", "subreaper"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "cgroup" && gateway.CgroupBase() == "" {
				t.Skip("no cgroup v2 here")
			}
			if mode == "subreaper" {
				defer gateway.DisableCgroups()()
			}
			pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
			o := options{}
			o.cfg.Upstreams = []gateway.Upstream{setsidUpstream(t, pidFile)}
			f := newFixture(t, o)
			g := waitPid(t, pidFile)
			if !alive(g) {
				t.Fatal("the grandchild is not running")
			}
			if mode == "cgroup" && !inOwnCgroup(g) {
				t.Error("the grandchild is not in an upstream cgroup")
			}
			f.gw.Close()
			deadline := time.Now().Add(5 * time.Second)
			for alive(g) {
				if time.Now().After(deadline) {
					_ = syscall.Kill(g, syscall.SIGKILL)
					t.Fatalf("the setsid grandchild %d outlived the gateway", g)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// inOwnCgroup reports whether pid is in a cgroup the gateway made.
func inOwnCgroup(pid int) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return strings.Contains(string(b), "/bulwark-upstream-")
}

// An upstream whose command does not exist fails to start, promptly, in
// either mode: the start is tried once in a cgroup and once without (the
// retry for a kernel that refuses the cgroup), not again and again; and no
// cgroup of this gateway is left behind.
func TestMissingCommandFailsToStart(t *testing.T) {
	for _, mode := range []string{"cgroup", "subreaper"} {
		t.Run(mode, func(t *testing.T) {
			base := gateway.CgroupBase()
			if mode == "cgroup" && base == "" {
				t.Skip("no cgroup v2 here")
			}
			if mode == "subreaper" {
				defer gateway.DisableCgroups()()
			}
			u := gateway.Upstream{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-binary")}
			gw, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Deps{Getenv: testEnv})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- gw.Start(ctx) }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("starting a command that does not exist did not fail within 10 s")
			}
			gw.Close()
			if err == nil || !strings.Contains(err.Error(), "starting") {
				t.Fatalf("Start: %v", err)
			}
			if base != "" {
				left, _ := filepath.Glob(filepath.Join(base, fmt.Sprintf("bulwark-upstream-%d-*", os.Getpid())))
				if len(left) > 0 {
					t.Errorf("cgroups left behind: %v", left)
				}
			}
		})
	}
}
