//go:build linux

package kernel_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// pipeRefs counts this process's descriptors of the pipe, or socket, f
// is an end of.
func pipeRefs(t *testing.T, f *os.File) int {
	t.Helper()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	kind := "pipe"
	if fi.Mode()&os.ModeSocket != 0 {
		kind = "socket"
	}
	name := fmt.Sprintf("%s:[%d]", kind, fi.Sys().(*syscall.Stat_t).Ino)
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == name {
			n++
		}
	}
	return n
}

func flags(t *testing.T, f *os.File) uintptr {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl uintptr
	rc.Control(func(fd uintptr) { fl, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0) })
	return fl
}

// ServeStdio on blocking OS pipes, as a client process hands them to a
// server it spawns: stdin and stdout are read and written through
// descriptors of the server's own (kernel/pipeio), the same answers come
// back as over any pipe, the client's descriptors keep their flags, and
// the server's own descriptors are closed when the session ends.
func TestStdioOverBlockingOSPipes(t *testing.T) {
	stdioOverOS(t, func() (r, w *os.File) {
		var fds [2]int
		if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	})
}

// The same over socket pairs, as a client on libuv (Node.js) hands its
// child: one for stdin, one for stdout. A socket's one file description
// is made non-blocking (pipeio.Reopen), so its flags are not compared.
func TestStdioOverSocketPairs(t *testing.T) {
	stdioOverOS(t, func() (r, w *os.File) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	})
}

func stdioOverOS(t *testing.T, pair func() (r, w *os.File)) {
	before := openFDs(t)
	inR, inW := pair()
	outR, outW := pair()
	sockets := false
	if fi, err := inR.Stat(); err == nil && fi.Mode()&os.ModeSocket != 0 {
		sockets = true
	}
	inFlags, outFlags := flags(t, inR), flags(t, outW)
	srv := fastServer(t, 1<<30, time.Now)
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), inR, outW) }()

	out := bufio.NewReader(outR)
	do := func(line string) string {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		got, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := do(stdioInit); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", got)
	}
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	want := ""
	for i := range 50 {
		got := do(call(`7`, `"get_item"`, `{"zone":"z","name":"n"}`, ""))
		if i == 0 {
			want = got
			if !strings.Contains(got, `"id":7,"result"`) {
				t.Fatalf("tools/call: %s", got)
			}
		} else if got != want {
			t.Fatalf("call %d answered %s, the first %s", i, got, want)
		}
	}
	// Over an in-memory pipe (no descriptors to reopen) the answer is the same.
	if rt := newStdioRoundTrip(t, fastServer(t, 1<<30, time.Now), false); rt.do(t, call(`7`, `"get_item"`, `{"zone":"z","name":"n"}`, "")) != want {
		t.Fatal("the answer over OS pipes differs from the one over io.Pipe")
	}
	// each pipe: the client's end, the server's, and the server's own
	// descriptor of it (pipeio.Reopen); each socket (the server's end of a
	// pair, an inode of its own): the server's end and its own
	refs := 3
	if sockets {
		refs = 2
	}
	if in, out := pipeRefs(t, inR), pipeRefs(t, outW); in != refs || out != refs {
		t.Fatalf("descriptors of the input %d, of the output %d: want %d each (stdin and stdout reopened)", in, out, refs)
	}
	if !sockets && (flags(t, inR) != inFlags || flags(t, outW) != outFlags) {
		t.Fatalf("the session changed its stdin or stdout's flags: %#x → %#x, %#x → %#x", inFlags, flags(t, inR), outFlags, flags(t, outW))
	}

	inW.Close() // the client's end of input
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return at the end of its input")
	}
	outR.Close()
	if after := openFDs(t); after > before {
		t.Fatalf("%d descriptors open before the session, %d after it", before, after)
	}
}

// A client that floods requests and reads none of its answers, over
// blocking OS pipes (stdin and stdout reopened through kernel/pipeio): the
// server stops reading once maxOwed handlers wait on the full pipe, as over
// io.Pipe, and every answer comes once the client reads.
func TestStdioClientStopsReadingOSPipes(t *testing.T) {
	pipe := func() (r, w *os.File) {
		var fds [2]int
		if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	}
	inR, inW := pipe()
	outR, outW := pipe()
	stdioClientStopsReading(t, inR, inW, outR, outW)
}
