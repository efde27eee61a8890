package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests build the real binary and run it as a separate process: what
// they check (the process's environment as the kernel shows it, a panic in
// a dependency's init) cannot be seen in process.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// binary builds cmd/bulwark once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "bulwark-bin"); buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "bulwark")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// runBinary runs the binary with exactly env and returns its exit code,
// stdout and stderr; it fails the test when the binary takes longer than
// 20 s (a hang).
func runBinary(t *testing.T, env []string, stdin *os.File, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("bulwark %s hung; stderr: %s", strings.Join(args, " "), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func baseEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
}

// An MCPGODEBUG the go-sdk cannot parse made it panic in its init, before
// main ran: it is refused in one line instead.
func TestMalformedMCPGODEBUGRefused(t *testing.T) {
	for _, v := range []string{"bogus", "a=1,b", ","} {
		code, _, stderr := runBinary(t, append(baseEnv(), "MCPGODEBUG="+v), nil, "version")
		if code != 2 || strings.Contains(stderr, "panic") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
			!strings.Contains(stderr, "MCPGODEBUG") {
			t.Errorf("MCPGODEBUG=%q: exit %d, stderr %q", v, code, stderr)
		}
	}
	if code, out, stderr := runBinary(t, append(baseEnv(), "MCPGODEBUG=somesetting=1"), nil, "version"); code != 0 || !strings.HasPrefix(out, "bulwark ") {
		t.Errorf("a well-formed MCPGODEBUG: exit %d, %q %q", code, out, stderr)
	}
}

// lockedBuffer is a buffer a child process's output goroutine may write
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
