package cli

import (
	"os"
	"syscall"
	"unsafe"
)

// fileIsTerminal asks the kernel for the file's terminal attributes: only a
// terminal has them. SyscallConn leaves the descriptor's mode alone.
func fileIsTerminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	})
	return err == nil && errno == 0
}
