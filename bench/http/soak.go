package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Bounds of the soak (issue 12).
const (
	soakRSS        = 128 << 20
	settleDeadline = 5 * time.Second
)

// soakResult is what the soak measured.
type soakResult struct {
	load             loadResult
	mem              memory
	idle, busy, last int           // goroutines: before the load, at its end, when settled
	settled          time.Duration // from the clients closing their connections to idle again; -1 if never
	logTail          string        // the end of the server's stderr
}

// soak starts a fresh bulwark with pprof on, counts its goroutines idle,
// drives it with c.soakClients closed-loop clients for c.soakDuration (a
// 429 is an allowed answer, anything else but a valid result an error),
// reads its peak resident memory, closes the clients' connections and
// waits up to settleDeadline for its goroutines to be back to the idle
// count.
func soak(ctx context.Context, c config, sp spec, work string) (r soakResult, err error) {
	sp.name = "bulwark-soak"
	sp.argv = append(sp.argv, "-pprof", "127.0.0.1:0")
	p, err := start(ctx, sp, work)
	if err != nil {
		return soakResult{}, err
	}
	defer p.stop()
	if p.pprof == "" {
		return soakResult{}, fmt.Errorf("%s printed no PPROF line", sp.name)
	}
	r = soakResult{settled: -1}
	defer func() { r.logTail = tail(p.log, 4<<10) }()
	// One untimed request first, so that what is built on the first call
	// (and stays) counts in the idle figure.
	hc := newHTTPClient(c.soakClients)
	runLoad(ctx, hc, p.url, 1, 200*time.Millisecond, false)
	hc.CloseIdleConnections()
	time.Sleep(200 * time.Millisecond)
	if r.idle, err = goroutines(ctx, p.pprof); err != nil {
		return r, err
	}
	fmt.Fprintf(os.Stderr, "soak: %d clients for %v against a fresh bulwark (%d goroutines idle)\n", c.soakClients, c.soakDuration, r.idle)
	if c.profileDir != "" {
		go profile(ctx, p.pprof, c.profileDir, "soak", c.soakDuration-time.Second)
	}
	r.load = runLoad(ctx, hc, p.url, c.soakClients, c.soakDuration, true)
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if r.busy, err = goroutines(ctx, p.pprof); err != nil {
		return r, err
	}
	if r.mem, err = readMemory(p.cmd.Process.Pid); err != nil {
		return r, err
	}
	hc.CloseIdleConnections()
	closed := time.Now()
	for {
		n, err := goroutines(ctx, p.pprof)
		if err != nil {
			return r, err
		}
		r.last = n
		if n <= r.idle {
			r.settled = time.Since(closed)
			break
		}
		if time.Since(closed) > settleDeadline {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r, nil
}

// goroutines reads the server's goroutine count from its pprof endpoint
// ("goroutine profile: total N"), over a connection of its own.
func goroutines(ctx context.Context, pprof string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pprof+"goroutine?debug=1", nil)
	if err != nil {
		return 0, err
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil && err != io.EOF {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "goroutine profile: total ")))
	if err != nil {
		return 0, fmt.Errorf("goroutine count from %q: %w", line, err)
	}
	return n, nil
}

// reportSoak prints the soak's figures and bounds; it returns 1 when an
// answer was an error, 3 when a bound was missed and -strict is set.
func reportSoak(w io.Writer, c config, r soakResult) int {
	l := sortLatencies(r.load.latencies)
	fmt.Fprintf(w, "\nsoak: %d closed-loop clients for %v against a fresh bulwark, %s\n", c.soakClients, c.soakDuration, machine())
	fmt.Fprintf(w, "  %d requests (%.0f req/s), %d answered 429, %d errors; p50 %v p99 %v\n",
		r.load.requests, float64(r.load.requests)/r.load.elapsed.Seconds(), r.load.refused, r.load.errors,
		us(percentile(l, 50)), us(percentile(l, 99)))
	fmt.Fprintf(w, "  VmHWM %.1f MiB; goroutines idle %d, at the end of the load %d, %d after the clients closed",
		mib(r.mem.HWM), r.idle, r.busy, r.last)
	if r.settled >= 0 {
		fmt.Fprintf(w, " (back to idle in %v)\n", r.settled.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, " (not back to idle within %v)\n", settleDeadline)
	}
	code, missed := 0, 0
	check := func(what string, ok bool) {
		mark := "met"
		if !ok {
			mark, missed = "MISSED", missed+1
		}
		fmt.Fprintf(w, "  %-60s %s\n", what, mark)
	}
	check("no error but 429s", r.load.errors == 0 && r.load.requests > 0)
	check(fmt.Sprintf("peak RSS %.1f MiB (at most %d MiB)", mib(r.mem.HWM), soakRSS>>20), r.mem.HWM <= soakRSS)
	check(fmt.Sprintf("goroutines back to %d within %v", r.idle, settleDeadline), r.settled >= 0)
	if r.load.errors > 0 || r.load.requests == 0 {
		fmt.Fprintf(os.Stderr, "soak: %d errors of %d answers, by status %v; first: %s\nthe server's log:\n%s\n",
			r.load.errors, r.load.requests, r.load.statuses, r.load.firstErr, r.logTail)
		code = 1
	}
	if missed > 0 && c.strict && code == 0 {
		code = 3
	}
	return code
}

// profile saves the server's CPU profile over d (started now) and then its
// heap and allocation profiles into dir as name-{cpu,heap,allocs}.pprof
// (and the heap profile as text, with runtime.MemStats, in
// name-memstats.txt); it
// is for analysis (-profile) and reports failures on stderr only.
func profile(ctx context.Context, pprof, dir, name string, d time.Duration) {
	secs := max(1, int(d/time.Second))
	for _, p := range []struct{ path, file string }{
		{"profile?seconds=" + strconv.Itoa(secs), "cpu"},
		{"heap", "heap"},
		{"allocs", "allocs"},
		{"heap?debug=1", "memstats.txt"}, // ends with runtime.MemStats
	} {
		file := name + "-" + p.file
		if !strings.HasSuffix(file, ".txt") {
			file += ".pprof"
		}
		if err := fetchTo(ctx, pprof+p.path, filepath.Join(dir, file)); err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return
		}
	}
}

func fetchTo(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// tail returns the last n bytes of a file, or why it could not be read.
func tail(file string, n int64) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	if int64(len(b)) > n {
		b = b[int64(len(b))-n:]
	}
	return string(b)
}
