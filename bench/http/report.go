package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// targets are the bounds (issue 12): bulwark's req/s over each
// baseline's, measured in the same run. above means strictly more than.
var targets = []struct {
	base  string
	ratio float64
	above bool
}{
	{"mcpgo", 1, true},
	{"mcpgo-valid", 1, true},
	{"bare-gc", 2, false},
	{"raw", 0.45, false},
	{"ts", 6, false},
}

// report prints the table and the ratios and returns the exit code.
func report(w io.Writer, c config, res []*result, skipped []string) int {
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
	for _, note := range skipped {
		fmt.Fprintln(w, note)
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
// Each ratio is over the whole run (all rounds); the per-round ratios after
// it show how much the machine's noise moved it.
func verdicts(w io.Writer, by map[string]*result) int {
	k := by["bulwark"]
	if k == nil || k.requests == 0 {
		return 0
	}
	missed := 0
	if sdk := by["bulwark-sdk"]; sdk != nil && sdk.requests > 0 {
		fmt.Fprintf(w, "fast path: bulwark/bulwark-sdk req/s = %.2f, CPU per call %.2f (same binary, GC policy and guards)\n",
			k.rps()/sdk.rps(), float64(k.cpu)/float64(k.requests)/(float64(sdk.cpu)/float64(sdk.requests)))
	}
	if b := by["bare"]; b != nil && b.requests > 0 {
		fmt.Fprintf(w, "bulwark/bare (runtime GC defaults) req/s = %.2f%s (no bound: see bare-gc)\n", k.rps()/b.rps(), perRound(k, b))
	}
	fmt.Fprintln(w, "targets (bulwark req/s over the baseline's; per round in brackets):")
	for _, t := range targets {
		b := by[t.base]
		if b == nil || b.requests == 0 {
			continue
		}
		ratio := k.rps() / b.rps()
		ok, op := ratio >= t.ratio, "at least"
		if t.above {
			ok, op = ratio > t.ratio, "more than"
		}
		mark := "met"
		if !ok {
			mark, missed = "MISSED", missed+1
		}
		fmt.Fprintf(w, "  %-58s %s\n", fmt.Sprintf("bulwark/%s = %.2f%s (%s %.2f)", t.base, ratio, perRound(k, b), op, t.ratio), mark)
	}
	return missed
}

// perRound is " [r1 r2 ...]": the ratio of a's req/s to b's in each round.
func perRound(a, b *result) string {
	if len(a.rounds) != len(b.rounds) || len(a.rounds) < 2 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(" [")
	for i := range a.rounds {
		if i > 0 {
			sb.WriteByte(' ')
		}
		ra, rb := a.rounds[i], b.rounds[i]
		fmt.Fprintf(&sb, "%.2f", float64(ra.requests)/ra.elapsed.Seconds()/(float64(rb.requests)/rb.elapsed.Seconds()))
	}
	sb.WriteByte(']')
	return sb.String()
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
