package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// process is a spawned upstream.
type process struct {
	cmd  *exec.Cmd
	box  *box          // what it runs in (proc_linux.go)
	done chan struct{} // closed once the child has exited and been reaped
	err  error         // its exit status, once done
}

// childEnv is the child's whole environment: exactly the allowlisted
// variables that are set in the gateway's. A nil Env would hand the child
// the gateway's entire environment, so it is never nil.
func childEnv(names []string, getenv func(string) string) []string {
	env := []string{}
	for _, n := range names {
		if v := getenv(n); v != "" {
			env = append(env, n+"="+v)
		}
	}
	return env
}

// spawn starts u's command with its allowlisted environment and returns
// the MCP transport over its stdin and stdout. Its stderr goes to the log,
// scrubbed, a line at a time.
func spawn(u *Upstream, getenv func(string) string, logger *slog.Logger, scrub *scrubber) (*process, *stdioTransport, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, nil, err
	}
	cmd, b, err := start(u, getenv, inR, outW, errW)
	for _, f := range []*os.File{inR, outW, errW} { // the child's ends
		f.Close()
	}
	if err != nil {
		for _, f := range []*os.File{inW, outR, errR} {
			f.Close()
		}
		return nil, nil, fmt.Errorf("starting %s: %w", u.Command, errors.Unwrap(err))
	}
	b.confineStarted(logger)
	track(cmd.Process.Pid, true)
	p := &process{cmd: cmd, box: b, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		track(cmd.Process.Pid, false)
		b.release()
		close(p.done)
	}()
	go logStderr(errR, u.Name, logger, scrub)
	t := &stdioTransport{r: outR, w: inW, maxLine: maxLine(u)}
	return p, t, nil
}

// start starts u's command on the given stdio, in its own cgroup where
// possible (proc_linux.go), else without: a start that fails in a cgroup
// is tried once more without one (the kernel may refuse the cgroup; the
// command may also just not exist, and then the second try fails as well).
func start(u *Upstream, getenv func(string) string, stdin, stdout, stderr *os.File) (*exec.Cmd, *box, error) {
	inCgroup := true
	for {
		cmd := exec.Command(u.Command, u.Args...)
		cmd.Env = childEnv(u.Env, getenv)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		b, started := childAttrs(cmd, inCgroup)
		err := cmd.Start()
		started()
		if err == nil || !b.retryable() {
			return cmd, b, err
		}
		inCgroup = false
	}
}

// maxLine caps one message line from a child: base64 and JSON escapes grow
// a result, so twice the result cap and room for the envelope.
func maxLine(u *Upstream) int { return 2*u.maxResult() + 64<<10 }

// kill ends the child and everything it started (its cgroup, or its
// process group and tree: proc_linux.go), and waits for it.
func (p *process) kill() {
	p.box.killAll(p.cmd)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// Limits of the child's stderr in the log.
const (
	stderrLineBytes   = 1024 // a longer line is cut
	stderrLinesPerSec = 50   // beyond this, lines are counted, not logged
)

// logStderr copies a child's stderr into the log, a line at a time: each
// line cleaned of invisible characters and envelope tags, its secrets
// scrubbed, cut at stderrLineBytes, and at most stderrLinesPerSec lines a
// second (a child that floods its stderr cannot flood the log).
func logStderr(r io.ReadCloser, name string, logger *slog.Logger, scrub *scrubber) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 4096)
	var window time.Time
	var n, dropped int
	for {
		line, err := readLine(br)
		if line != "" || err == nil {
			if now := time.Now(); now.Sub(window) >= time.Second {
				if dropped > 0 {
					logger.Warn("upstream stderr: lines dropped", "upstream", name, "dropped", dropped)
				}
				window, n, dropped = now, 0, 0
			}
			if n++; n > stderrLinesPerSec {
				dropped++
			} else {
				logger.Info("upstream stderr", "upstream", name, "line", scrub.text(untrusted.CleanString(line)))
			}
		}
		if err != nil {
			if dropped > 0 {
				logger.Warn("upstream stderr: lines dropped", "upstream", name, "dropped", dropped)
			}
			return
		}
	}
}

// readLine reads one line, keeping at most stderrLineBytes of it.
func readLine(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		chunk, isPrefix, err := br.ReadLine()
		if room := stderrLineBytes - b.Len(); room > 0 {
			b.Write(chunk[:min(len(chunk), room)])
		}
		if err != nil || !isPrefix {
			return strings.ToValidUTF8(b.String(), "\uFFFD"), err
		}
	}
}
