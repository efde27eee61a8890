package bootenv

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// reexec hands payload over a pipe to a fresh image of this binary, started
// without the secret variables. It returns only when that failed.
func reexec(payload []byte) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := w.Write(payload); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	// os.Pipe sets close-on-exec; the read end must survive the exec.
	rfd := int(r.Fd())
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(rfd), syscall.F_SETFD, 0); e != 0 {
		return e
	}
	env := append(withoutSecrets(os.Environ()), fdVar+"="+strconv.Itoa(rfd))
	err = syscall.Exec("/proc/self/exe", os.Args, env)
	return fmt.Errorf("exec /proc/self/exe: %w", err)
}

// receive reads the secrets from the descriptor the previous image named,
// once, and closes it. Only an inherited pipe is accepted, so a stray
// variable cannot make the process read its stdin or a file.
func receive(fdText string, m map[string]string) error {
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return fmt.Errorf("%s=%q: not a descriptor this program handed over", fdVar, fdText)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return fmt.Errorf("%s=%q: not a descriptor this program handed over", fdVar, fdText)
	}
	syscall.CloseOnExec(fd)
	defer syscall.Close(fd)
	// Non-blocking: the whole hand-over was written before the exec, so a
	// read that would wait means this is not one (a pipe someone else holds
	// open), and startup must not hang on it.
	if err := syscall.SetNonblock(fd, true); err != nil {
		return err
	}
	var p []byte
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Read(fd, buf)
		if n > 0 {
			p = append(p, buf[:n]...)
		}
		switch {
		case len(p) > maxHandover:
			return errors.New("the secrets hand-over is too large")
		case err == syscall.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("%s=%q: not a descriptor this program handed over", fdVar, fdText)
		case n == 0:
			return decode(p, m)
		}
	}
}
