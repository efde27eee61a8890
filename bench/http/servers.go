package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is one server process under test.
type server struct {
	name  string
	cmd   *exec.Cmd
	url   string
	pprof string // its pprof base URL, when it printed "PPROF <url>"
	log   string // its stderr, kept for a failure report
}

// spec says how to start one server.
type spec struct {
	name string
	argv []string
	dir  string
	env  []string // added to the environment
}

// goBuild builds pkg of the module in modDir into out.
func goBuild(ctx context.Context, modDir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = modDir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s in %s: %v\n%s", pkg, modDir, err, b)
	}
	return nil
}

// ensureNode installs the pinned Node and TypeScript SDK (npm ci) when
// they are missing, and returns the Node binary. It fails, for the caller
// to skip the TypeScript server, when npm is missing or fails, or the Node
// it got is not Node 22.
func ensureNode(ctx context.Context, tsDir string) (string, error) {
	node := filepath.Join(tsDir, "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		fmt.Fprintln(os.Stderr, "installing Node and the TypeScript SDK: npm ci in", tsDir)
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = tsDir
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("no Node 22 with the TypeScript SDK: npm ci in %s: %w", tsDir, err)
		}
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("no Node 22: %s --version: %w", node, err)
	}
	if v := strings.TrimSpace(string(out)); !isNode22(v) {
		return "", fmt.Errorf("no Node 22: %s is %s", node, v)
	}
	return node, nil
}

// isNode22 reports whether a `node --version` output is a Node 22 release.
func isNode22(v string) bool { return strings.HasPrefix(v, "v22.") }

// start runs the server and waits for its "READY <url>" line.
func start(ctx context.Context, sp spec, logDir string) (*server, error) {
	cmd := exec.Command(sp.argv[0], sp.argv[1:]...)
	cmd.Dir = sp.dir
	cmd.Env = append(os.Environ(), sp.env...)
	logPath := filepath.Join(logDir, sp.name+".stderr")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", sp.name, err)
	}
	s := &server{name: sp.name, cmd: cmd, log: logPath}
	ready := make(chan string, 1)
	pprof := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "PPROF "); ok {
				pprof <- url
			}
			if url, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				ready <- url
			}
		}
	}()
	select {
	case s.url = <-ready:
		select { // printed before READY, if at all
		case s.pprof = <-pprof:
		default:
		}
		return s, nil
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	s.stop()
	return nil, fmt.Errorf("%s did not become ready (see %s)", sp.name, logPath)
}

// stop ends the process (SIGTERM, then SIGKILL) and reaps it.
func (s *server) stop() {
	if s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// memory is a process's resident memory, from /proc/<pid>/status.
type memory struct {
	HWM, RSS int64 // bytes: peak and current resident set
}

func readMemory(pid int) (memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	var m memory
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "VmHWM":
			m.HWM = kib(v)
		case "VmRSS":
			m.RSS = kib(v)
		}
	}
	if m.HWM == 0 {
		return m, errors.New("no VmHWM in /proc status")
	}
	return m, nil
}

func kib(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return n << 10
}

// cpuTime is the user plus system CPU time a process has used so far,
// from /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
