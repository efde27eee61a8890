package storetest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Restartable is a Redis a test may stop and start again on the same
// address, its data kept: a redis-server of the test's own (with an
// append-only file, so a clean stop loses nothing) when the binary is on
// PATH, else miniredis.
type Restartable struct {
	// Kind is "redis" or "miniredis", for the test log.
	Kind string
	// Addr is the host:port it listens on, before and after a restart.
	Addr string
	t    testing.TB
	dir  string
	cmd  *exec.Cmd
	mini *miniredis.Miniredis
}

// NewRestartable starts a Redis for the test alone and stops it at cleanup.
func NewRestartable(t testing.TB) *Restartable {
	t.Helper()
	r := &Restartable{t: t}
	if _, err := exec.LookPath("redis-server"); err != nil {
		r.Kind, r.mini = KindMiniredis, miniredis.RunT(t)
		r.Addr = r.mini.Addr()
		return r
	}
	r.Kind, r.dir = KindRedis, t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.Addr = ln.Addr().String()
	ln.Close()
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Stop stops the Redis; a redis-server is sent SIGTERM and waited for, so
// it writes its append-only file first.
func (r *Restartable) Stop() {
	if r.mini != nil {
		r.mini.Close()
		return
	}
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	_ = r.cmd.Wait()
	r.cmd = nil
}

// Start starts it again on the same address and waits until it answers.
func (r *Restartable) Start() {
	r.t.Helper()
	if r.mini != nil {
		if err := r.mini.Restart(); err != nil {
			r.t.Fatal(err)
		}
		return
	}
	_, port, _ := net.SplitHostPort(r.Addr)
	r.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "yes", "--appendfsync", "always", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	waitAnswers(r.t, r.Addr)
}

// Server starts a redis-server of the test's own on a free loopback port
// with args, waits until it answers, and stops it at cleanup. It skips the
// test when redis-server is not on PATH, except under CI=true.
func Server(t testing.TB, args ...string) (addr string, cmd *exec.Cmd) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but redis-server is not on PATH")
		}
		t.Skip("needs redis-server on PATH")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd = exec.Command("redis-server", append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir()}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitAnswers(t, addr)
	return addr, cmd
}

// waitAnswers waits until the Redis at addr answers PING, 5 s at most.
func waitAnswers(t testing.TB, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if i == 100 {
			t.Fatalf("redis-server at %s did not start: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
