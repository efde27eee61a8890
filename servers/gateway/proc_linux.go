package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How an upstream child and everything it starts are ended (Linux):
//
//   - The child runs in its own process group, with a parent-death signal
//     (SIGKILL when the gateway dies, even by SIGKILL).
//   - Where a cgroup v2 hierarchy is mounted and the gateway's own cgroup is
//     writable (root, or a delegated subtree), the child is started inside a
//     cgroup of its own (clone3 CLONE_INTO_CGROUP, so not even its first
//     instruction runs outside it). Nothing it starts can leave that cgroup,
//     whatever it does (setsid, double fork); stopping the upstream kills
//     the whole cgroup (cgroup.kill) and removes it.
//   - Otherwise the gateway makes itself a child subreaper
//     (PR_SET_CHILD_SUBREAPER): a process whose parent exits is adopted by
//     the gateway instead of init, so it stays in the gateway's tree.
//     Stopping the upstream stops its whole tree of descendants (SIGSTOP, to
//     a fixed point, so none can fork meanwhile), kills it, and reaps the
//     adopted ones. A descendant that left the tree before (its parent
//     exited: a child that exits when its stdin closes, a double fork) is
//     the gateway's child, no longer attributable to an upstream: the
//     gateway kills every such adopted child when it stops (sweepAdopted).

// noCgroup, for tests, makes the gateway behave as where cgroup v2 is not
// available.
var noCgroup atomic.Bool

// box is what an upstream child was started in.
type box struct {
	cgroup string // the child's own cgroup directory, or ""
}

var (
	cgroupOnce sync.Once
	cgroupBase string // the gateway's own cgroup v2 directory, "" if none
	cgroupSeq  atomic.Uint64

	subreaperOnce sync.Once
	subreaperErr  error
	subreaper     atomic.Bool // the gateway is a child subreaper

	spawnedMu sync.Mutex
	spawned   = map[int]bool{} // the upstream children running now
)

// ownCgroup finds the gateway's own cgroup v2 directory from
// /proc/self/cgroup and /proc/self/mountinfo, or "".
func ownCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var rel string
	for _, line := range strings.Split(string(b), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel = r
		}
	}
	if rel == "" {
		return ""
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fs := strings.Fields(pre)
		if !ok || len(fs) < 5 || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		root, mnt := fs[3], fs[4]
		sub, ok := strings.CutPrefix(rel, strings.TrimSuffix(root, "/"))
		if !ok || (sub != "" && !strings.HasPrefix(sub, "/")) {
			continue
		}
		dir := filepath.Join(mnt, sub)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
			return dir
		}
	}
	return ""
}

// childAttrs prepares cmd: its own process group, a parent-death signal,
// and its own cgroup where possible and inCgroup is true. It returns what
// the child is started in, and a function to call once Start has returned.
func childAttrs(cmd *exec.Cmd, inCgroup bool) (*box, func()) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if !inCgroup || noCgroup.Load() {
		return &box{}, func() {}
	}
	cgroupOnce.Do(func() { cgroupBase = ownCgroup() })
	if cgroupBase == "" {
		return &box{}, func() {}
	}
	removeStale(cgroupBase)
	dir := filepath.Join(cgroupBase, fmt.Sprintf("bulwark-upstream-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil { // not writable: no cgroup
		return &box{}, func() {}
	}
	fd, err := os.Open(dir)
	if err != nil {
		_ = os.Remove(dir)
		return &box{}, func() {}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(fd.Fd())
	return &box{cgroup: dir}, func() { fd.Close() }
}

// retryable reports whether a child that failed to start in b should be
// started again without a cgroup (the kernel refused CLONE_INTO_CGROUP);
// it removes b's cgroup.
func (b *box) retryable() bool {
	if b.cgroup == "" {
		return false
	}
	_ = os.Remove(b.cgroup)
	b.cgroup = ""
	return true
}

// confineStarted finishes what childAttrs began once the child runs: without
// a cgroup, the gateway becomes a child subreaper.
func (b *box) confineStarted(logger interface{ Warn(string, ...any) }) {
	if b.cgroup != "" {
		return
	}
	subreaperOnce.Do(func() {
		subreaperErr = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		subreaper.Store(subreaperErr == nil)
		if subreaperErr != nil {
			logger.Warn("upstream children: neither a cgroup nor a child subreaper; a descendant that leaves the child's process group may outlive it", "error", subreaperErr.Error())
		}
	})
}

// track records pid as a running upstream child (not an adopted one).
func track(pid int, running bool) {
	spawnedMu.Lock()
	defer spawnedMu.Unlock()
	if running {
		spawned[pid] = true
	} else {
		delete(spawned, pid)
	}
}

// sweepAdopted, when the gateway is a subreaper and stops, kills (with
// their trees) and reaps the children it adopted: descendants of upstreams
// whose parents exited. The upstream children themselves are not touched.
func sweepAdopted() {
	if !subreaper.Load() {
		return
	}
	self := os.Getpid()
	spawnedMu.Lock()
	defer spawnedMu.Unlock()
	for pid, ppid := range parents() {
		if ppid == self && !spawned[pid] {
			killTree(pid)
			go reap(pid)
		}
	}
}

// killAll kills the child, its process group and everything it started.
func (b *box) killAll(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if b.cgroup != "" {
		killCgroup(b.cgroup)
	} else if subreaperErr == nil {
		killTree(cmd.Process.Pid)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

// release, once the child has been reaped, removes its cgroup (waiting for
// the rest of it to die).
func (b *box) release() {
	if b.cgroup == "" {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := rmdirTree(b.cgroup)
		if err == nil || errors.Is(err, unix.ENOENT) || time.Now().After(deadline) {
			return
		}
		killCgroup(b.cgroup)
		time.Sleep(20 * time.Millisecond)
	}
}

// rmdirTree removes the cgroup dir and the cgroups an upstream made
// inside it (a nested gateway's, say), deepest first: a cgroup with
// children cannot be removed.
func rmdirTree(dir string) error {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			_ = rmdirTree(filepath.Join(dir, e.Name()))
		}
	}
	return unix.Rmdir(dir)
}

// killCgroup kills every process in the cgroup dir: cgroup.kill (Linux
// 5.14), or each member in turn until none is left.
func killCgroup(dir string) {
	if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	for range 100 {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		pids := strings.Fields(string(b))
		if err != nil || len(pids) == 0 {
			return
		}
		for _, p := range pids {
			if n, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// removeStale kills and removes the cgroups a gateway that no longer runs
// (killed with SIGKILL) left under base.
func removeStale(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "bulwark-upstream-*-*"))
	for _, d := range dirs {
		f := strings.Split(filepath.Base(d), "-")
		pid, err := strconv.Atoi(f[len(f)-2])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue // its gateway still runs
		}
		killCgroup(d)
		(&box{cgroup: d}).release()
	}
}

// parents maps each process to its parent, from /proc.
func parents() map[int]int {
	out := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(s)))
		if len(f) < 2 || err1 != nil {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			out[pid] = ppid
		}
	}
	return out
}

// killTree kills root and all its descendants. They are stopped first, to
// a fixed point, so that none forks while the tree is walked; a descendant
// whose parent dies is adopted by the gateway (a subreaper), and is reaped
// here.
func killTree(root int) {
	tree := map[int]bool{root: true}
	_ = syscall.Kill(root, syscall.SIGSTOP)
	for range 64 {
		grew := false
		for pid, ppid := range parents() {
			if tree[ppid] && !tree[pid] {
				tree[pid], grew = true, true
				_ = syscall.Kill(pid, syscall.SIGSTOP)
			}
		}
		if !grew {
			break
		}
	}
	for pid := range tree {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	for pid := range tree {
		if pid != root { // root is the exec.Cmd's, reaped by its Wait
			go reap(pid)
		}
	}
}

// reap waits for pid, a killed descendant, once it is the gateway's child.
func reap(pid int) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var ws unix.WaitStatus
		n, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if n == pid {
			return
		}
		if errors.Is(err, unix.ECHILD) { // not (yet) adopted, or gone
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}
