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

func init() {
	if os.Getenv(parentVar) != "1" {
		return
	}
	u := fakeUpstream()
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
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), parentVar+"=1")
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
