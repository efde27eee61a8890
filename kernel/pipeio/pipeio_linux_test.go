//go:build linux

package pipeio_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/pipeio"
)

// blockingPipe is a pipe whose descriptors are blocking, as a parent
// process hands its child's stdin and stdout.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl uintptr
	rc.Control(func(fd uintptr) { fl, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0) })
	return fl&syscall.O_NONBLOCK != 0
}

func osPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// Bytes written in pieces of every size through Writer arrive whole and in
// order through Reader, with the pipe full (the writer waiting in the
// poller) and empty (the reader waiting) many times over.
func TestReaderWriterCarryEveryByte(t *testing.T) {
	r, w := osPipe(t)
	pr, pw := pipeio.Reader(r), pipeio.Writer(w)
	if pr == io.Reader(r) || pw == io.Writer(w) {
		t.Fatal("os.Pipe's files are non-blocking: they should be wrapped")
	}
	want := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	errc := make(chan error, 1)
	go func() {
		rest := want
		for len(rest) > 0 {
			n := min(len(rest), 1+rng.IntN(200<<10)) // up to 3 pipes' worth at once
			k, err := pw.Write(rest[:n])
			if err != nil || k != n {
				errc <- errors.Join(err, errors.New("short write"))
				return
			}
			rest = rest[n:]
		}
		errc <- w.Close()
	}()
	got, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
}

// A blocking descriptor is never wrapped: a read of it would block in a
// system call the runtime does not know of, holding its thread and
// processor. Nor is anything that is not an *os.File.
func TestBlockingAndOtherReadersKept(t *testing.T) {
	r, w := blockingPipe(t)
	if got := pipeio.Reader(r); got != io.Reader(r) {
		t.Errorf("Reader wrapped a blocking pipe: %T", got)
	}
	if got := pipeio.Writer(w); got != io.Writer(w) {
		t.Errorf("Writer wrapped a blocking pipe: %T", got)
	}
	sr := strings.NewReader("x")
	if got := pipeio.Reader(sr); got != io.Reader(sr) {
		t.Errorf("Reader wrapped a %T", sr)
	}
	var b bytes.Buffer
	if got := pipeio.Writer(&b); got != io.Writer(&b) {
		t.Errorf("Writer wrapped a %T", &b)
	}
}

// A read with nothing to read waits in the poller, holding no processor:
// on one processor, other goroutines go on running (a read blocked in an
// untracked system call would stop them all, the collector included).
func TestWaitingReadHoldsNoProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	r, w := osPipe(t)
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 16)
		n, err := pipeio.Reader(r).Read(b)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b[:n])
	}()
	time.Sleep(20 * time.Millisecond) // the reader is waiting
	done := make(chan bool)
	go func() {
		runtime.GC() // stops the world: every goroutine must be at a safe point
		done <- true
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting read held the only processor")
	}
	if _, err := pipeio.Writer(w).Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "hello" {
		t.Fatalf("read %q", s)
	}
}

// Closing the file ends a read that waits, with an error, and the end of
// the pipe is io.EOF.
func TestCloseEndsAWaitingRead(t *testing.T) {
	r, w := osPipe(t)
	errc := make(chan error, 1)
	go func() {
		_, err := pipeio.Reader(r).Read(make([]byte, 8))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	r.Close()
	select {
	case err := <-errc:
		if err == nil || errors.Is(err, io.EOF) {
			t.Fatalf("a read of a closed file returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the file did not end the read")
	}

	r2, w2 := osPipe(t)
	w2.Close()
	if _, err := pipeio.Reader(r2).Read(make([]byte, 8)); !errors.Is(err, io.EOF) {
		t.Fatalf("the end of the pipe read as %v, not io.EOF", err)
	}
	_ = w
}

// A write to a pipe whose reader is gone fails (EPIPE); the process lives
// on (the runtime ignores SIGPIPE on descriptors other than 1 and 2).
func TestWriteToAClosedPipeFails(t *testing.T) {
	r, w := osPipe(t)
	r.Close()
	_, err := pipeio.Writer(w).Write([]byte("x"))
	if !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write to a pipe with no reader: %v, want EPIPE", err)
	}
}

// Reopen gives a blocking pipe a non-blocking descriptor of its own: the
// original keeps its flags (its file description may be another
// process's too), both name the same pipe, and the new one is wrapped.
func TestReopenLeavesTheOriginalBlocking(t *testing.T) {
	r, w := blockingPipe(t)
	nr := pipeio.Reopen(r, false)
	nw := pipeio.Reopen(w, true)
	if nr == nil || nw == nil {
		t.Skip("no /proc/self/fd here")
	}
	defer nr.Close()
	defer nw.Close()
	if nonblocking(t, r) || nonblocking(t, w) {
		t.Fatal("Reopen made the original descriptors non-blocking")
	}
	if !nonblocking(t, nr) || !nonblocking(t, nw) {
		t.Fatal("the reopened descriptors are blocking")
	}
	if _, err := pipeio.Writer(nw).Write([]byte("through")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	n, err := pipeio.Reader(nr).Read(b)
	if err != nil || string(b[:n]) != "through" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	// and the original write end reaches the new read end: the same pipe
	if _, err := w.Write([]byte("same")); err != nil {
		t.Fatal(err)
	}
	n, err = pipeio.Reader(nr).Read(b)
	if err != nil || string(b[:n]) != "same" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
}

// Reopen leaves alone what is not a blocking pipe: a pipe the runtime
// polls already, and a regular file.
func TestReopenOnlyBlockingPipes(t *testing.T) {
	r, _ := osPipe(t)
	if f := pipeio.Reopen(r, false); f != nil {
		f.Close()
		t.Error("Reopen reopened a non-blocking pipe")
	}
	reg, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if f := pipeio.Reopen(reg, true); f != nil {
		f.Close()
		t.Error("Reopen reopened a regular file")
	}
}

// Applies says which files go through this package: pipes, blocking or
// not, and sockets (a libuv client's stdio); not a regular file, or
// anything that is not an *os.File.
func TestApplies(t *testing.T) {
	r, w := osPipe(t)
	br, bw := blockingPipe(t)
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock := os.NewFile(uintptr(fds[0]), "sock")
	defer sock.Close()
	defer syscall.Close(fds[1])
	reg, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	for _, c := range []struct {
		name string
		x    any
		want bool
	}{
		{"os.Pipe read end", r, true},
		{"os.Pipe write end", w, true},
		{"blocking pipe read end", br, true},
		{"blocking pipe write end", bw, true},
		{"socket", sock, true},
		{"regular file", reg, false},
		{"strings.Reader", strings.NewReader(""), false},
		{"nil", nil, false},
	} {
		if got := pipeio.Applies(c.x); got != c.want {
			t.Errorf("%s: Applies %v, want %v", c.name, got, c.want)
		}
	}
}

// A socket has no second file description: Reopen duplicates it and makes
// the one description non-blocking; bytes go both ways through the
// duplicate. A socket that is also the process's stderr is left alone
// (TestReopenSocketThatIsStderr, in a child process).
func TestReopenSocket(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	defer ours.Close()
	defer theirs.Close()
	if nonblocking(t, ours) {
		t.Fatal("the socket starts non-blocking")
	}
	own := pipeio.Reopen(ours, false)
	if own == nil {
		t.Fatal("Reopen refused a blocking socket")
	}
	defer own.Close()
	if !nonblocking(t, own) {
		t.Fatal("the reopened socket is blocking")
	}
	if _, err := theirs.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	n, err := pipeio.Reader(own).Read(b)
	if err != nil || string(b[:n]) != "ping" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	if _, err := pipeio.Writer(own).Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	n, err = theirs.Read(b)
	if err != nil || string(b[:n]) != "pong" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
}

// The socket the process's stderr is (inetd-style services get one socket
// for all three) is not made non-blocking: the os package writes stderr
// as a blocking file, and a full socket would lose log lines. The check
// runs in a child whose stdin, stdout and stderr are one socket.
func TestReopenSocketThatIsStderr(t *testing.T) {
	if os.Getenv("PIPEIO_STDERR_CHILD") == "1" {
		if f := pipeio.Reopen(os.Stdin, false); f != nil {
			os.Exit(3)
		}
		if pipeio.Applies(os.Stdout) {
			os.Exit(4)
		}
		os.Exit(0)
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	defer ours.Close()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestReopenSocketThatIsStderr$")
	cmd.Env = append(os.Environ(), "PIPEIO_STDERR_CHILD=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs, theirs, theirs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child reopened the socket its stderr is: %v", err)
	}
}

// A read or a write through this package allocates nothing: it is on
// every relayed call's path, twice each way.
func TestReadWriteAllocateNothing(t *testing.T) {
	r, w := osPipe(t)
	pr, pw := pipeio.Reader(r), pipeio.Writer(w)
	msg, buf := []byte("a line of a message\n"), make([]byte, 64)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := pw.Write(msg); err != nil {
			t.Fatal(err)
		}
		if n, err := pr.Read(buf); err != nil || n != len(msg) {
			t.Fatalf("read %d, %v", n, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a write and a read allocate %v times", allocs)
	}
}
