// Command http is bulwark's HTTP load benchmark: one trivial tools/call
// over Streamable HTTP on loopback, closed-loop load from 16 concurrent
// clients, against every server in the same run, each its own process:
//
//   - bulwark: kernel.New + Server.ServeHTTP with every guard on
//     (cmd/kernelserver; bulwark-sdk is the same with the fast path off);
//   - bare, bare-gc: a go-sdk server with the stateless Streamable HTTP
//     handler at its defaults, with the runtime's GC settings and with
//     bulwark's GC policy (cmd/bareserver);
//   - mcpgo, mcpgo-valid: github.com/mark3labs/mcp-go's stateless Streamable
//     HTTP server, without and with its schema validation (mcpgo/, its own
//     module);
//   - raw: plain net/http writing back the same JSON bulwark answers
//     (cmd/rawserver), the ceiling;
//   - ts: the TypeScript SDK's stateless Streamable HTTP server with the
//     same tool, on Node 22 from npm (ts/server.mjs); skipped with a message
//     when Node 22 cannot be installed.
//
// Run it from the repository root:
//
//	go run ./bench/http [-duration 5s] [-clients 16] [-rounds 3] [-soak-duration 10s]
//
// The servers are measured one after another, in rounds whose order
// alternates (A B C, then C B A, ...) so that drift in the machine's load
// falls on all of them; each measurement follows its own warm-up. It prints
// requests per second, p50 and p99 latency, errors, CPU time per request and
// the resident memory (VmHWM, VmRSS) of every server process, then the
// ratios the issue bounds, and exits non-zero if any response was not a
// valid successful tool result (or, with -strict, if a target is missed).
//
// Then the soak: a fresh bulwark under -soak-clients (1,000) closed-loop
// clients for -soak-duration, where every answer must be a valid result or a
// 429, its peak resident memory is read, and its goroutine count must be back
// to its idle count within 5 s after the clients close their connections.
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
	altEnv           string
	baseKernel       string
	keepLogs         bool
	soakClients      int
	soakDuration     time.Duration
	profileDir       string
}

func main() {
	var c config
	var servers string
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "measured time per server per round")
	flag.DurationVar(&c.warmup, "warmup", time.Second, "unmeasured load before each measurement")
	flag.IntVar(&c.clients, "clients", 16, "concurrent closed-loop clients")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds over all servers, alternating their order")
	flag.StringVar(&servers, "servers", defaultServers, "comma-separated servers to measure ("+allServers+"); empty for none")
	flag.IntVar(&c.soakClients, "soak-clients", 1000, "concurrent clients of the soak against bulwark")
	flag.DurationVar(&c.soakDuration, "soak-duration", 10*time.Second, "length of the soak (the documented figure uses 60s); 0 skips it")
	flag.BoolVar(&c.strict, "strict", false, "exit non-zero when a target of the issue is missed")
	flag.StringVar(&c.kernelArgs, "kernel-args", "", "extra space-separated flags for cmd/kernelserver (e.g. -pprof 127.0.0.1:6060)")
	flag.StringVar(&c.bareEnv, "bare-env", "", "for analysis only: space-separated VAR=value pairs for the bare server (e.g. GOGC=400), to tell the memory policy's effect from the kernel's own cost")
	flag.StringVar(&c.baseKernel, "base-kernel", "", "for before/after comparisons: a cmd/kernelserver `binary` built from another commit, measured as bulwark-base beside bulwark")
	flag.StringVar(&c.altEnv, "alt-env", "GOGC=400", "for analysis only: space-separated VAR=value pairs for bulwark-alt, the bulwark server with another environment (e.g. another GOGC)")
	flag.BoolVar(&c.keepLogs, "keep-logs", false, "keep the servers' stderr logs and binaries (printed at the end)")
	flag.StringVar(&c.profileDir, "profile", "", "save the server-side pprof CPU, heap and allocation profiles of each bulwark server's first measured round and of the soak into this `directory` (bulwark servers get -pprof)")
	flag.Parse()
	if servers != "" {
		c.servers = strings.Split(servers, ",")
	}
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
	bins, err := buildGo(ctx, root, work)
	if err != nil {
		return 0, err
	}
	specs, skipped, err := prepare(ctx, c, root, bins)
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
	code := 0
	if len(res) > 0 {
		code = report(os.Stdout, c, res, skipped)
	}
	for _, p := range procs {
		p.stop()
	}
	procs = nil
	if c.soakDuration > 0 {
		sr, err := soak(ctx, c, kernelSpec(c, bins), work)
		if err != nil {
			return 0, err
		}
		code = max(code, reportSoak(os.Stdout, c, sr))
	}
	return code, nil
}

// The servers bench/http knows, and those it measures by default.
const (
	allServers     = "bulwark, bulwark-sdk, bulwark-alt, bulwark-base, bare, bare-gc, mcpgo, mcpgo-valid, raw, ts"
	defaultServers = "bulwark,bare,bare-gc,mcpgo,mcpgo-valid,raw,ts"
)

// binaries are the Go servers, built once.
type binaries struct{ kernel, bare, raw, mcpgo string }

// buildGo builds the Go servers into dir: three from the bulwark module,
// mcp-go's from its own module (bench/http/mcpgo).
func buildGo(ctx context.Context, root, dir string) (binaries, error) {
	var b binaries
	for _, t := range []struct {
		out         *string
		modDir, pkg string
	}{
		{&b.kernel, root, "./bench/http/cmd/kernelserver"},
		{&b.bare, root, "./bench/http/cmd/bareserver"},
		{&b.raw, root, "./bench/http/cmd/rawserver"},
		{&b.mcpgo, filepath.Join(root, "bench", "http", "mcpgo"), "."},
	} {
		name := filepath.Base(t.pkg)
		if name == "." {
			name = filepath.Base(t.modDir)
		}
		*t.out = filepath.Join(dir, name)
		if err := goBuild(ctx, t.modDir, t.pkg, *t.out); err != nil {
			return b, err
		}
	}
	return b, nil
}

func kernelSpec(c config, bins binaries, extra ...string) spec {
	argv := append([]string{bins.kernel}, extra...)
	if c.profileDir != "" {
		argv = append(argv, "-pprof", "127.0.0.1:0")
	}
	return spec{name: "bulwark", argv: append(argv, strings.Fields(c.kernelArgs)...)}
}

// prepare returns how to start each selected server, and a note for each
// one it had to skip (only ts, when Node 22 is not to be had).
func prepare(ctx context.Context, c config, root string, bins binaries) (specs []spec, skipped []string, err error) {
	for _, name := range c.servers {
		switch name {
		case "bulwark":
			specs = append(specs, kernelSpec(c, bins))
		case "bulwark-sdk": // the same server, every request through the go-sdk
			sp := kernelSpec(c, bins, "-disable-fast-path")
			sp.name = name
			specs = append(specs, sp)
		case "bulwark-alt": // the same server, with -alt-env
			sp := kernelSpec(c, bins)
			sp.name, sp.env = name, strings.Fields(c.altEnv)
			specs = append(specs, sp)
		case "bulwark-base": // another build of the same server (-base-kernel)
			if c.baseKernel == "" {
				return nil, nil, fmt.Errorf("bulwark-base needs -base-kernel")
			}
			sp := kernelSpec(c, binaries{kernel: c.baseKernel})
			sp.name = name
			specs = append(specs, sp)
		case "bare":
			specs = append(specs, spec{name: name, argv: []string{bins.bare}, env: strings.Fields(c.bareEnv)})
		case "bare-gc": // the same GC policy as bulwark
			specs = append(specs, spec{name: name, argv: []string{bins.bare, "-memory-policy"}})
		case "mcpgo":
			specs = append(specs, spec{name: name, argv: []string{bins.mcpgo}})
		case "mcpgo-valid":
			specs = append(specs, spec{name: name, argv: []string{bins.mcpgo, "-validate"}})
		case "raw":
			specs = append(specs, spec{name: name, argv: []string{bins.raw}})
		case "ts":
			tsDir := filepath.Join(root, "bench", "http", "ts")
			node, err := ensureNode(ctx, tsDir)
			if err != nil {
				note := fmt.Sprintf("ts skipped: %v", err)
				fmt.Fprintln(os.Stderr, "bench/http:", note)
				skipped = append(skipped, note)
				continue
			}
			specs = append(specs, spec{name: name, argv: []string{node, "server.mjs"}, dir: tsDir, env: []string{"NODE_ENV=production"}})
		default:
			return nil, nil, fmt.Errorf("unknown server %q (use %s)", name, allServers)
		}
	}
	return specs, skipped, nil
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
		if len(procs) == 0 {
			break
		}
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
			runLoad(ctx, hc, r.proc.url, c.clients, c.warmup, false)
			if c.profileDir != "" && round == 0 && r.proc.pprof != "" {
				go profile(ctx, r.proc.pprof, c.profileDir, r.proc.name, c.duration-time.Second)
			}
			cpu0 := cpuTime(pid)
			lr := runLoad(ctx, hc, r.proc.url, c.clients, c.duration, false)
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
	r.errors += lr.errors + lr.refused
	r.elapsed += lr.elapsed
	if r.firstErr == "" {
		r.firstErr = lr.firstErr
	}
	r.latencies = append(r.latencies, lr.latencies...)
	lr.latencies = nil
	r.rounds = append(r.rounds, lr)
}

func (r *result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }
