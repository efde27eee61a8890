package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Targets of the issue ("Kernel II").
const (
	targetVsBare = 1.5
	targetVsTS   = 4.0
	targetRSS    = 100 << 20
)

// report prints the table and the ratios and returns the exit code.
func report(w io.Writer, c config, res []*result) int {
	fmt.Fprintf(w, "\ntools/call over HTTP on loopback: %d closed-loop clients, %d round(s) of %v per server (after %v warm-up each), %s\n",
		c.clients, c.rounds, c.duration, c.warmup, machine())
	fmt.Fprintf(w, "%-11s %10s %9s %9s %9s %7s %10s %9s %9s\n", "server", "req/s", "p50", "p99", "p99.9", "errors", "CPU/req", "VmHWM", "VmRSS")
	by := map[string]*result{}
	code := 0
	for _, r := range res {
		by[r.proc.name] = r
		l := sortLatencies(r.latencies)
		cpuPerReq := time.Duration(0)
		if r.requests > 0 {
			cpuPerReq = r.cpu / time.Duration(r.requests)
		}
		fmt.Fprintf(w, "%-11s %10.0f %9v %9v %9v %7d %10v %8.1fM %8.1fM\n", r.proc.name, r.rps(),
			us(percentile(l, 50)), us(percentile(l, 99)), us(percentile(l, 99.9)), r.errors, us(cpuPerReq),
			mib(r.mem.HWM), mib(r.mem.RSS))
		if r.errors > 0 || r.requests == 0 {
			fmt.Fprintf(os.Stderr, "%s: %d of %d responses were not valid successful tool results; first: %s\n",
				r.proc.name, r.errors, r.requests, r.firstErr)
			code = 1
		}
	}
	if rounds := roundTable(res); rounds != "" {
		fmt.Fprint(w, rounds)
	}
	if verdicts(w, by) > 0 && c.strict && code == 0 {
		code = 3
	}
	return code
}

// roundTable shows each round's req/s, to make drift visible.
func roundTable(res []*result) string {
	if len(res) == 0 || len(res[0].rounds) < 2 {
		return ""
	}
	var b strings.Builder
	b.WriteString("req/s per round:")
	for _, r := range res {
		fmt.Fprintf(&b, "  %s", r.proc.name)
		for _, lr := range r.rounds {
			fmt.Fprintf(&b, " %.0f", float64(lr.requests)/lr.elapsed.Seconds())
		}
	}
	b.WriteString("\n")
	return b.String()
}

// verdicts prints the ratios and targets; it returns how many were missed.
func verdicts(w io.Writer, by map[string]*result) int {
	k := by["bulwark"]
	if k == nil {
		return 0
	}
	missed := 0
	check := func(what string, ok bool) {
		mark := "met"
		if !ok {
			mark, missed = "MISSED", missed+1
		}
		fmt.Fprintf(w, "  %-52s %s\n", what, mark)
	}
	kp99 := percentile(sortLatencies(k.latencies), 99)
	if sdk := by["bulwark-sdk"]; sdk != nil && sdk.requests > 0 && k.requests > 0 {
		fmt.Fprintf(w, "fast path: bulwark/bulwark-sdk req/s = %.2f, CPU per call %.2f (same binary, GC policy and guards)\n",
			k.rps()/sdk.rps(), float64(k.cpu)/float64(k.requests)/(float64(sdk.cpu)/float64(sdk.requests)))
	}
	fmt.Fprintln(w, "targets:")
	for _, base := range []struct {
		name   string
		target float64
	}{{"bare", targetVsBare}, {"ts", targetVsTS}} {
		b := by[base.name]
		if b == nil {
			continue
		}
		bp99 := percentile(sortLatencies(b.latencies), 99)
		check(fmt.Sprintf("bulwark/%s req/s = %.2f (at least %.1f)", base.name, k.rps()/b.rps(), base.target), k.rps() >= base.target*b.rps())
		check(fmt.Sprintf("p99 bulwark %v < %s %v", us(kp99), base.name, us(bp99)), kp99 < bp99)
	}
	check(fmt.Sprintf("bulwark VmHWM %.1f MiB (under %d MiB)", mib(k.mem.HWM), targetRSS>>20), k.mem.HWM < targetRSS)
	return missed
}

func us(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// machine names the CPU count and the load average at the end of the run.
func machine() string {
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("%d CPUs, load average %s", runtime.NumCPU(), load)
}
