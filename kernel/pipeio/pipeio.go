// Package pipeio reads and writes the pipes of a stdio server — its own
// stdin and stdout, and the pipes to a child it relays to — with fewer
// thread wake-ups than the os package's reads and writes.
//
// A relayed call over stdio is a chain of processes that wake each other:
// the client writes a line, the relay wakes, writes on, the server wakes,
// and back. Measured on a 2-core virtual machine (docs/performance.md,
// "bulwark gateway"), a relay process written in C that only copies bytes
// made a call 1.01-1.11× as long as a direct one; the same relay in Go
// 1.13-1.25×. The difference is the runtime's bookkeeping around each
// system call, not the copying: a blocking read of a pipe parks a thread
// in a system call, where the runtime's monitor thread takes its processor
// back and then polls every 20 µs while the process is busy, and every
// read and write marks the start and end of a system call, which wakes
// that monitor when it sleeps. The same relay whose reads and writes are
// non-blocking system calls made without that bookkeeping
// (syscall.RawSyscall), and that waits for data in the runtime's poller,
// measured 1.01-1.10× in the same runs: what the C relay costs.
//
// Reader and Writer do that for a non-blocking *os.File (a pipe from
// os.Pipe, or one Reopen gave): each read or write is one non-blocking
// system call the runtime does not track, which returns at once; when
// there is nothing to read, or no room to write, the goroutine waits in the
// poller as an os.File read or write does, holding no thread. A system
// call that cannot block cannot hold up the collector or the scheduler, so
// the runtime has nothing to track. Anything else (a blocking descriptor, a
// file that is not an *os.File, another platform) is returned as it is.
//
// Reopen gives a process's own stdin or stdout, when it is a pipe, a
// non-blocking descriptor of its own, so that its reads and writes can go
// through the poller: os.Stdin and os.Stdout stay blocking (the os package
// never changes them, since the pipe's file description may be shared with
// other processes), and a blocking read is the system call the runtime
// polls a thread for.
package pipeio

import (
	"io"
	"os"
)

// Reader returns a reader of r whose reads are untracked non-blocking
// system calls that wait in the poller when there is nothing to read, when
// r is a non-blocking *os.File on a platform where that is done (Linux);
// otherwise r itself. Closing r ends a read that waits (os.ErrClosed, as
// for r's own Read). A read of 0 bytes at the end of the pipe is io.EOF.
func Reader(r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok {
		if w := wrap(f); w != nil {
			return (*reader)(w)
		}
	}
	return r
}

// Writer is Reader for writes: each Write writes all of p (or fails),
// waiting in the poller while the pipe is full.
func Writer(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		if x := wrap(f); x != nil {
			return (*writer)(x)
		}
	}
	return w
}

// Reopen returns a new, non-blocking descriptor of the pipe f is, opened
// for reading (write false) or writing, which the runtime's poller waits
// on; the caller closes it. f and its file description are not changed.
// It returns nil when f is not a blocking pipe, or the pipe cannot be
// opened again (no /proc, a platform other than Linux, a pipe with no
// reader left for a write): the caller then keeps using f.
func Reopen(f *os.File, write bool) *os.File {
	return reopen(f, write)
}
