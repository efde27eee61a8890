// Command http is bulwark's HTTP load benchmark: one trivial tools/call
// over Streamable HTTP on loopback, closed-loop load from 16 concurrent
// clients, against three servers in the same run, each its own process:
//
//   - bulwark: kernel.New + Server.ServeHTTP with every guard on
//     (cmd/kernelserver);
//   - bare: a go-sdk server with the stateless Streamable HTTP handler at its
//     defaults (cmd/bareserver);
//   - ts: the TypeScript SDK's stateless Streamable HTTP server with the
//     same tool, on Node 22 from npm (ts/server.mjs).
//
// Run it from the repository root:
//
//	go run ./bench/http [-duration 10s] [-clients 16] [-rounds 2]
//
// The servers are measured one after another, in rounds whose order
// alternates (A B C, then C B A, ...) so that drift in the machine's load
// falls on all of them; each measurement follows its own warm-up. It prints
// requests per second, p50 and p99 latency, errors, CPU time per request and
// the resident memory (VmHWM, VmRSS) of every server process, then the
// ratios the issue bounds, and exits non-zero if any response was not a
// valid successful tool result (or, with -strict, if a target is missed).
// The first run installs Node and the TypeScript SDK with npm ci.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type config struct {
	duration, warmup time.Duration
	clients, rounds  int
	servers          []string
	strict           bool
	kernelArgs       string
	bareEnv          string
	keepLogs         bool
}

func main() {
	var c config
	var servers string
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time per server per round")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured load before each measurement")
	flag.IntVar(&c.clients, "clients", 16, "concurrent closed-loop clients")
	flag.IntVar(&c.rounds, "rounds", 2, "rounds over all servers, alternating their order")
	flag.StringVar(&servers, "servers", "bulwark,bare,ts", "comma-separated servers to measure (bulwark, bulwark-sdk, bare, ts)")
	flag.BoolVar(&c.strict, "strict", false, "exit non-zero when a target of the issue is missed")
	flag.StringVar(&c.kernelArgs, "kernel-args", "", "extra space-separated flags for cmd/kernelserver (e.g. -pprof 127.0.0.1:6060)")
	flag.StringVar(&c.bareEnv, "bare-env", "", "for analysis only: space-separated VAR=value pairs for the bare server (e.g. GOGC=400), to tell the memory policy's effect from the kernel's own cost")
	flag.BoolVar(&c.keepLogs, "keep-logs", false, "keep the servers' stderr logs and binaries (printed at the end)")
	flag.Parse()
	c.servers = strings.Split(servers, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/http:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(ctx context.Context, c config) (int, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return 0, err
	}
	work, err := os.MkdirTemp("", "bulwark-bench-http-")
	if err != nil {
		return 0, err
	}
	if c.keepLogs {
		defer fmt.Fprintln(os.Stderr, "logs and binaries kept in", work)
	} else {
		defer os.RemoveAll(work)
	}
	specs, err := prepare(ctx, c, root, work)
	if err != nil {
		return 0, err
	}
	var procs []*server
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for _, sp := range specs {
		p, err := start(ctx, sp, work)
		if err != nil {
			return 0, err
		}
		procs = append(procs, p)
	}
	res := measure(ctx, c, procs)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	for _, r := range res {
		if r.mem, err = readMemory(r.proc.cmd.Process.Pid); err != nil {
			return 0, fmt.Errorf("%s: %w", r.proc.name, err)
		}
	}
	return report(os.Stdout, c, res), nil
}

// prepare builds the Go servers, installs Node if needed, and returns how
// to start each selected server.
func prepare(ctx context.Context, c config, root, work string) ([]spec, error) {
	bins, err := buildGo(ctx, root, work, "./bench/http/cmd/kernelserver", "./bench/http/cmd/bareserver")
	if err != nil {
		return nil, err
	}
	var specs []spec
	for _, name := range c.servers {
		switch name {
		case "bulwark":
			specs = append(specs, spec{name: name, argv: append([]string{bins[0]}, strings.Fields(c.kernelArgs)...)})
		case "bulwark-sdk": // the same server, every request through the go-sdk
			argv := append([]string{bins[0], "-disable-fast-path"}, strings.Fields(c.kernelArgs)...)
			specs = append(specs, spec{name: name, argv: argv})
		case "bare":
			specs = append(specs, spec{name: name, argv: []string{bins[1]}, env: strings.Fields(c.bareEnv)})
		case "ts":
			tsDir := filepath.Join(root, "bench", "http", "ts")
			node, err := ensureNode(ctx, tsDir)
			if err != nil {
				return nil, err
			}
			specs = append(specs, spec{name: name, argv: []string{node, "server.mjs"}, dir: tsDir, env: []string{"NODE_ENV=production"}})
		default:
			return nil, fmt.Errorf("unknown server %q (use bulwark, bulwark-sdk, bare, ts)", name)
		}
	}
	return specs, nil
}

func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run it inside the bulwark module: go run ./bench/http")
	}
	return filepath.Dir(mod), nil
}

// result is everything measured for one server, over all rounds.
type result struct {
	proc      *server
	rounds    []loadResult
	cpu       time.Duration // CPU time used during the measured intervals
	mem       memory
	firstErr  string
	requests  int
	errors    int
	elapsed   time.Duration
	latencies []time.Duration
}

// measure runs the rounds, alternating the order of the servers.
func measure(ctx context.Context, c config, procs []*server) []*result {
	hc := newHTTPClient(c.clients)
	res := make([]*result, len(procs))
	for i, p := range procs {
		res[i] = &result{proc: p}
	}
	for round := range c.rounds {
		order := make([]int, len(procs))
		for i := range order {
			order[i] = i
			if round%2 == 1 {
				order[i] = len(procs) - 1 - i
			}
		}
		for _, i := range order {
			if ctx.Err() != nil {
				return res
			}
			r := res[i]
			pid := r.proc.cmd.Process.Pid
			runLoad(ctx, hc, r.proc.url, c.clients, c.warmup)
			cpu0 := cpuTime(pid)
			lr := runLoad(ctx, hc, r.proc.url, c.clients, c.duration)
			r.cpu += cpuTime(pid) - cpu0
			r.add(lr)
			fmt.Fprintf(os.Stderr, "round %d %-8s %8.0f req/s  p99 %v  errors %d\n", round+1, r.proc.name,
				float64(lr.requests)/lr.elapsed.Seconds(), percentile(sortLatencies(lr.latencies), 99).Round(time.Microsecond), lr.errors)
			hc.CloseIdleConnections()
		}
	}
	return res
}

func (r *result) add(lr loadResult) {
	r.requests += lr.requests
	r.errors += lr.errors
	r.elapsed += lr.elapsed
	if r.firstErr == "" {
		r.firstErr = lr.firstErr
	}
	r.latencies = append(r.latencies, lr.latencies...)
	lr.latencies = nil
	r.rounds = append(r.rounds, lr)
}

func (r *result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }
