//go:build linux

package pipeio

import (
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// file is a non-blocking *os.File and its raw connection, whose Read and
// Write wait in the poller between the system calls made here. The state
// of the one read or write in progress is kept here, under mu, so that
// the functions handed to the raw connection are made once, not a closure
// a call (TestReadWriteAllocateNothing).
type file struct {
	f  *os.File
	rc syscall.RawConn

	mu    sync.Mutex // one read or write at a time, as os.File's own lock
	p     []byte     // what is read into, or written
	n     int        // read, or written so far
	errno syscall.Errno
	op    func(fd uintptr) bool // readOnce or writeSome, bound once
}

type reader file

type writer file

// descriptor is what wrap and reopen look at: f's raw connection, its
// descriptor, whether that is non-blocking, and its stat; ok false when
// any of it cannot be read (a closed file).
type descriptor struct {
	rc          syscall.RawConn
	fd          int
	nonblocking bool
	st          syscall.Stat_t
}

func inspect(f *os.File) (d descriptor, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return d, false
	}
	d.rc, d.fd = rc, -1
	if rc.Control(func(u uintptr) {
		fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, u, syscall.F_GETFL, 0)
		if e == 0 && syscall.Fstat(int(u), &d.st) == nil {
			d.fd, d.nonblocking = int(u), fl&syscall.O_NONBLOCK != 0
		}
	}) != nil || d.fd < 0 {
		return d, false
	}
	return d, true
}

// wrap returns f's raw connection when f's descriptor is non-blocking
// (then the runtime polls it: os.Pipe's files, os.NewFile of a
// non-blocking descriptor), or nil.
func wrap(f *os.File) *file {
	if d, ok := inspect(f); ok && d.nonblocking {
		return &file{f: f, rc: d.rc}
	}
	return nil
}

func newReader(x *file) *reader {
	x.op = x.readOnce
	return (*reader)(x)
}

func newWriter(x *file) *writer {
	x.op = x.writeSome
	return (*writer)(x)
}

// readOnce makes one read(2) on the non-blocking descriptor with
// syscall.RawSyscall — it returns at once, so the runtime need not know —
// and reports false (wait in the poller, then call again) when there is
// nothing to read.
func (x *file) readOnce(fd uintptr) bool {
	for {
		m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&x.p[0])), uintptr(len(x.p)))
		switch e {
		case 0:
			x.n = int(m)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			x.errno = e
			return true
		}
	}
}

// writeSome writes what is left of x.p with write(2) calls as readOnce
// reads, and reports false when the pipe is full.
func (x *file) writeSome(fd uintptr) bool {
	for x.n < len(x.p) {
		m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&x.p[x.n])), uintptr(len(x.p)-x.n))
		switch e {
		case 0:
			x.n += int(m)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			x.errno = e
			return true
		}
	}
	return true
}

// Read reads with readOnce, waiting in the poller (RawConn.Read) while
// there is nothing to read.
func (r *reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := (*file)(r).do(p, false)
	switch {
	case err != nil:
		return 0, pathError("read", r.f, err)
	case errno != 0:
		return 0, pathError("read", r.f, errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p with writeSome, waiting in the poller while the
// pipe is full.
func (w *writer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := (*file)(w).do(p, true)
	switch {
	case err != nil:
		return n, pathError("write", w.f, err)
	case errno != 0:
		return n, pathError("write", w.f, errno)
	}
	return n, nil
}

// do runs x.op on p through the raw connection, one read or write at a
// time, and returns what it read or wrote and the errors.
func (x *file) do(p []byte, write bool) (n int, errno syscall.Errno, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.p, x.n, x.errno = p, 0, 0
	if write {
		err = x.rc.Write(x.op)
	} else {
		err = x.rc.Read(x.op)
	}
	n, errno = x.n, x.errno
	x.p = nil
	return n, errno, err
}

func pathError(op string, f *os.File, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return &os.PathError{Op: op, Path: f.Name(), Err: err}
}

func applies(f *os.File) bool {
	if wrap(f) != nil {
		return true
	}
	fd, _ := reopenable(f)
	return fd >= 0
}

// reopenable returns f's descriptor and its stat when f is a blocking
// pipe or socket (not the one the process's stderr is: see reopen), or -1.
func reopenable(f *os.File) (fd int, st syscall.Stat_t) {
	d, ok := inspect(f)
	if !ok || d.nonblocking {
		return -1, st
	}
	fd, st = d.fd, d.st
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return fd, st
	case syscall.S_IFSOCK:
		var errst syscall.Stat_t
		if syscall.Fstat(2, &errst) == nil && errst.Dev == st.Dev && errst.Ino == st.Ino {
			return -1, st // stderr is this socket: the os package writes it, blocking
		}
		return fd, st
	}
	return -1, st
}

// reopen opens /proc/self/fd/N again, non-blocking, when f is a blocking
// pipe: a new file description of the same pipe, so f's own (which other
// processes may share) keeps its flags. A socket cannot be opened again:
// for one, it duplicates the descriptor and makes the file description
// they share non-blocking, as net.FileConn does — unless it is also the
// process's stderr, which the os package writes as a blocking file.
func reopen(f *os.File, write bool) *os.File {
	fd, st := reopenable(f)
	if fd < 0 {
		return nil
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFSOCK {
		nfd, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			return nil
		}
		if syscall.SetNonblock(int(nfd), true) != nil {
			syscall.Close(int(nfd))
			return nil
		}
		return os.NewFile(nfd, f.Name())
	}
	mode := syscall.O_RDONLY
	if write {
		mode = syscall.O_WRONLY
	}
	nfd, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), mode|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var nst syscall.Stat_t
	if syscall.Fstat(nfd, &nst) != nil || nst.Dev != st.Dev || nst.Ino != st.Ino {
		syscall.Close(nfd)
		return nil
	}
	return os.NewFile(uintptr(nfd), f.Name())
}
