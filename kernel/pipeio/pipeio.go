// Package pipeio reads and writes the pipes of a stdio server — its own
// stdin and stdout, and the pipes to a child it relays to — with fewer
// thread wake-ups than the os package's reads and writes.
//
// A relayed call over stdio is a chain of processes that wake each other:
// the client writes a line, the relay wakes, writes on, the server wakes,
// and back. Every thread wake-up beyond those is time on the call's path,
// and on a small machine time taken from the client or the server. With
// the os package, a Go process adds several a call (docs/performance.md,
// "bulwark gateway": perf traces of the gateway binary): a blocking read
// of stdin parks a thread in a system call, the runtime's monitor thread
// takes its processor back and then polls every 20 µs while the process is
// busy, and every tracked system call wakes that monitor when it sleeps.
// Read through this package (and, for the gateway, on one processor), the
// gateway process's threads were switched in 2.2 times a relayed call
// instead of 8.1, with 0.06 futex calls instead of 3.0 and 0.15 of the
// monitor's sleeps instead of 3.5.
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
// Reopen gives a process's own stdin or stdout, when it is a pipe or a
// socket, a non-blocking descriptor of its own, so that its reads and
// writes can go through the poller (a blocking read is the system call the
// runtime polls a thread for). A pipe is opened again, a new file
// description, so os.Stdin and os.Stdout stay blocking (the os package
// never changes them: the pipe's description may be shared with other
// processes). A socket (clients on libuv, such as Node.js, hand their
// children socket pairs) cannot be: its one description is made
// non-blocking, as net.FileConn does, unless the process's stderr is that
// socket too.
package pipeio

import (
	"io"
	"os"
)

// Reader returns a reader of r whose reads are untracked non-blocking
// system calls that wait in the poller when there is nothing to read, when
// r is a non-blocking *os.File on a platform where that is done (Linux);
// otherwise r itself. Closing r ends a read that waits, with an error (an
// *os.PathError). The end of the pipe is io.EOF.
func Reader(r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok {
		if w := wrap(f); w != nil {
			return newReader(w)
		}
	}
	return r
}

// Writer is Reader for writes: each Write writes all of p (or fails),
// waiting in the poller while the pipe is full.
func Writer(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		if x := wrap(f); x != nil {
			return newWriter(x)
		}
	}
	return w
}

// Reopen returns a new, non-blocking descriptor of the pipe or socket f
// is, for reading (write false) or writing, which the runtime's poller
// waits on; the caller closes it. For a pipe, f and its file description
// are not changed; for a socket, their description is made non-blocking
// (the package doc says why). It returns nil when f is neither a blocking
// pipe nor a blocking socket, when f is the socket stderr is too, or when
// the pipe cannot be opened again (no /proc, a platform other than Linux, a
// pipe with no reader left for a write): the caller then keeps using f.
func Reopen(f *os.File, write bool) *os.File {
	return reopen(f, write)
}

// Applies reports whether x is read or written through this package's
// path: a non-blocking *os.File, or a blocking pipe or socket Reopen can
// give a descriptor of its own (Linux). A terminal or a regular file is
// not.
func Applies(x any) bool {
	f, ok := x.(*os.File)
	return ok && applies(f)
}
