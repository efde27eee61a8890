// Package gateway_test benchmarks bulwark gateway beside direct use, in one
// run: a go-sdk client calling a stdio MCP server (the fake upstream, a
// child process) directly, and the same client calling the same tool over
// stdio to the gateway (kernel.Server.ServeStdio on a pair of OS pipes, as
// `bulwark gateway` serves its client; kernel pipeline, envelope, audit) in
// front of another child of the same server, interleaved call by call.
//
//	go test -run '^$' -bench . -benchtime 2000x ./bench/gateway/
package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/pipeio"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
	"github.com/bulwarkmcp/bulwark/servers/gateway/pin"
)

func TestMain(m *testing.M) {
	if v := os.Getenv(relayVar); v != "" {
		os.Exit(relay(v == "pipeio"))
	}
	mcpupstream.MaybeServe()
	code := m.Run()
	if scratchDir != "" {
		os.RemoveAll(scratchDir)
	}
	os.Exit(code)
}

// scratch is the one directory this run builds its binaries into (the
// gateway, the C relay), made on first use and removed by TestMain when the
// run ends.
var scratch = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "bulwark-bench")
	scratchDir = dir
	return dir, err
})

// scratchDir is scratch's directory once made.
var scratchDir string

// relayVar makes this test binary a relay (BenchmarkGatewayFloor): it
// starts another copy of itself as the fake upstream and copies bytes both
// ways through its own buffer, doing nothing else — the least any process
// between a client and a stdio server costs.
const relayVar = "BULWARK_BENCH_RELAY"

// With relayVar=pipeio it reads and writes as the gateway does (its stdin
// and stdout reopened and every pipe read and written through
// kernel/pipeio) and runs, as the gateway does over stdio, on one
// processor (GOMAXPROCS=1, from its environment).
func relay(pipeIO bool) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{mcpupstream.EnvVar + "=1", "GOGC=100"}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		return 1
	}
	// a plain read and write loop: io.Copy between two files may splice,
	// which no relay that looks at the bytes can do
	pump := func(dst io.Writer, src io.Reader) {
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	var stdin io.Reader = os.Stdin
	var stdout io.Writer = os.Stdout
	var upIn io.Writer = in
	var upOut io.Reader = out
	if pipeIO {
		if f := pipeio.Reopen(os.Stdin, false); f != nil {
			stdin = f
		}
		if f := pipeio.Reopen(os.Stdout, true); f != nil {
			stdout = f
		}
		stdin, stdout = pipeio.Reader(stdin), pipeio.Writer(stdout)
		upIn, upOut = pipeio.Writer(in), pipeio.Reader(out)
	}
	go func() { pump(upIn, stdin); in.Close() }()
	pump(stdout, upOut)
	_ = cmd.Wait()
	return 0
}

// throughRelay connects a go-sdk client over stdio to a relay process (this
// binary with relayVar set) in front of a grandchild of the fake upstream.
func throughRelay(tb testing.TB) *mcp.ClientSession {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{relayVar + "=1", "GOGC=100"}
	return connect(tb, cmd)
}

// throughPipeIORelay is throughRelay with the relay reading and writing as
// the gateway does (pipeIORelayCommand).
func throughPipeIORelay(tb testing.TB) *mcp.ClientSession {
	return connect(tb, pipeIORelayCommand())
}

// pipeIORelayCommand is the relay (this binary) reading and writing as the
// gateway does (relayVar=pipeio), on one processor, in front of a
// grandchild of the fake upstream.
func pipeIORelayCommand() *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{relayVar + "=pipeio", "GOGC=100", "GOMAXPROCS=1"}
	return cmd
}

func getenv(n string) string {
	if n == mcpupstream.EnvVar {
		return "1"
	}
	return ""
}

func upstreamConfig() gateway.Config {
	return gateway.Config{Upstreams: []gateway.Upstream{{Name: "fake", Command: os.Args[0], Env: []string{mcpupstream.EnvVar}, PublicEnv: []string{mcpupstream.EnvVar}, ReadOnlyTools: []string{"echo"}}}}
}

// connect connects a go-sdk client over stdio to the child cmd starts,
// closed when the test or benchmark ends.
func connect(tb testing.TB, cmd *exec.Cmd) *mcp.ClientSession {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// direct connects a go-sdk client to a child over stdio.
func direct(tb testing.TB) *mcp.ClientSession { return connect(tb, directCommand()) }

// directCommand is the fake upstream as the direct arm runs it.
func directCommand() *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{mcpupstream.EnvVar + "=1"}
	return cmd
}

// throughGateway connects a go-sdk client over stdio (a pair of OS pipes,
// the go-sdk's IOTransport on the client's side, kernel.Server.ServeStdio
// on the gateway's, as `bulwark gateway` serves) to a gateway in front of a
// child over stdio, built as the CLI builds it: a pin file (trust on first
// use) and a tool set that may change at run time.
func throughGateway(tb testing.TB) *mcp.ClientSession {
	cs, _ := throughGatewayServer(tb)
	return cs
}

// throughGatewayServer is throughGateway with the gateway's kernel server.
func throughGatewayServer(tb testing.TB) (*mcp.ClientSession, *kernel.Server) {
	pins, err := pin.Open(filepath.Join(tb.TempDir(), "bench"+pin.FileSuffix), &pin.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	gw, err := gateway.New(upstreamConfig(), gateway.Deps{Getenv: getenv, Pinner: pins})
	if err != nil {
		tb.Fatal(err)
	}
	if err := gw.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(gw.Close)
	ks, err := kernel.New(kernel.Info{Name: "bulwark-gateway"}, gw.Tools(), &kernel.Options{Envelope: gw.Envelope(), DynamicTools: true})
	if err != nil {
		tb.Fatal(err)
	}
	if err := gw.Attach(ks); err != nil {
		tb.Fatal(err)
	}
	inR, inW, err := os.Pipe() // client -> gateway
	if err != nil {
		tb.Fatal(err)
	}
	outR, outW, err := os.Pipe() // gateway -> client
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); _ = ks.ServeStdio(ctx, inR, outW); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); cancel(); inW.Close(); <-served; outR.Close() })
	return cs, ks
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// gatewayBlock is the number of calls each way in a block of
// BenchmarkGatewayCall.
const gatewayBlock = 100

// BenchmarkGatewayCall: a trivial call returning 1 KB, direct vs through the
// gateway, in alternating blocks of 100 calls each way (one round per
// iteration: -benchtime 20x is 2,000 calls each way; the arm that goes first
// alternates by round). Each arm runs in its steady state, as a client
// using one or the other sees it, and the alternation cancels a drift in
// the machine's load. gateway/direct is the ratio the issue bounds (at most
// 1.25), median-round-ratio the median of the rounds' ratios (which resists
// a burst of other work), p99-added-us the added p99 latency (under 1 ms).
// BenchmarkGatewayCallInterleaved alternates call by call instead.
func BenchmarkGatewayCall(b *testing.B) {
	benchBlocks(b, direct(b), throughGateway(b))
}

// benchBlocks runs BenchmarkGatewayCall's rounds: blocks of gatewayBlock
// calls direct (dc) and through a gateway (gc), the first arm alternating.
func benchBlocks(b *testing.B, dc, gc *mcp.ClientSession, probes ...*cpuProbe) {
	blocks(b, func() time.Duration { return timedCall(b, dc, "echo") },
		func() time.Duration { return timedCall(b, gc, "fake.echo") }, probes...)
}

// blocks runs rounds of gatewayBlock calls direct and gatewayBlock through
// a gateway, the first arm alternating, each call timed by its arm, and
// reports them (reportGateway) with the median of the rounds' ratios, and
// the CPU per call of the processes probes name.
func blocks(b *testing.B, direct, gateway func() time.Duration, probes ...*cpuProbe) {
	block := func(arm string, call func() time.Duration, into *[]time.Duration) time.Duration {
		var sum time.Duration
		for range gatewayBlock {
			d := call()
			noteStall(b, arm, d)
			*into = append(*into, d)
			sum += d
		}
		return sum
	}
	var warm []time.Duration
	for range 2 {
		block("direct", direct, &warm)
		block("gateway", gateway, &warm)
	}
	var td, tg []time.Duration
	var ratios []float64
	for _, p := range probes {
		p.begin()
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var sd, sg time.Duration
		if i%2 == 0 {
			sd = block("direct", direct, &td)
			sg = block("gateway", gateway, &tg)
		} else {
			sg = block("gateway", gateway, &tg)
			sd = block("direct", direct, &td)
		}
		ratios = append(ratios, float64(sg)/float64(sd))
	}
	for _, p := range probes {
		p.report(b, len(td), len(tg))
	}
	reportGateway(b, td, tg)
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-round-ratio")
}

// stallAt is a call's time past which noteStall logs it: a second, or the
// duration BULWARK_BENCH_STALL gives (a stall hunt: docs/performance.md).
var stallAt = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("BULWARK_BENCH_STALL")); err == nil && d > 0 {
		return d
	}
	return time.Second
}()

// noteStall logs a call of a timed block that took longer than stallAt,
// with its arm and when it ended. Until session 11 an arm now and then lost
// exactly a minute in a run — a direct arm, a C relay's and a gateway's
// did: the Go runtime of the go-sdk fake upstream stopping the world while
// its stdin reader entered a blocking read (docs/performance.md, "bulwark
// gateway", sessions 10 and 11). The fake now keeps a timer pending
// (mcpupstream's sysmonBound), which bounds such a stall to about 100 ms;
// a stall hunt (BULWARK_BENCH_STALL=50ms) shows whether that still holds.
func noteStall(b *testing.B, arm string, d time.Duration) {
	if d > stallAt {
		b.Logf("a %s call took %v (ended %s)", arm, d, time.Now().UTC().Format("15:04:05"))
	}
}

// binaryProbes are the CPU probes of a benchmark of the gateway binary
// (the process gcmd started, and its upstream) beside the direct upstream
// dcmd started.
func binaryProbes(dcmd, gcmd *exec.Cmd) []*cpuProbe {
	return []*cpuProbe{{name: "direct-upstream", pid: dcmd.Process.Pid},
		{name: "gateway", pid: gcmd.Process.Pid, gateway: true},
		{name: "gateway-upstream", pid: childPID(gcmd.Process.Pid), gateway: true}}
}

// gatewayBinary builds cmd/bulwark once for BenchmarkGatewayBinary, or
// names the binary BULWARK_BENCH_BINARY gives (to compare two builds).
var gatewayBinary = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("BULWARK_BENCH_BINARY"); bin != "" {
		return bin, nil
	}
	dir, err := scratch()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bulwark")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/bulwarkmcp/bulwark/cmd/bulwark").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// throughBinary connects a go-sdk client over stdio to `bulwark gateway`
// itself, a child process, in front of a grandchild of the same fake
// upstream: what a client runs. The gateway gets GOGC=100, the collector
// setting of the upstream and of this process, and the binary's own over
// stdio (kernel/memory's GOGC 200 is for HTTP); GOMAXPROCS is the binary's
// own choice (one processor over stdio: internal/cli gatewayProcs).
func throughBinary(tb testing.TB) *mcp.ClientSession {
	return connect(tb, gatewayCommand(tb))
}

// gatewayCommand is `bulwark gateway` in front of the fake upstream, as
// throughBinary runs it.
func gatewayCommand(tb testing.TB) *exec.Cmd {
	bin, err := gatewayBinary()
	if err != nil {
		tb.Skip(err)
	}
	home := tb.TempDir()
	cmd := exec.Command(bin, "gateway", "--prefix", "fake", "--env", mcpupstream.EnvVar, "--public-env", mcpupstream.EnvVar, "--read-only-tools", "echo",
		"--data-dir", filepath.Join(home, "pins"), "--", os.Args[0])
	cmd.Env = []string{mcpupstream.EnvVar + "=1", "HOME=" + home, "GOGC=100"}
	return cmd
}

// throughBinarySocket is throughBinary over socket pairs instead of pipes,
// as a client on libuv (Node.js) hands its child: one for stdin, one for
// stdout.
func throughBinarySocket(tb testing.TB) *mcp.ClientSession {
	cmd := gatewayCommand(tb)
	pair := func() (ours *os.File, theirs *os.File) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			tb.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	}
	inOurs, inTheirs := pair()
	outOurs, outTheirs := pair()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inTheirs, outTheirs, os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	inTheirs.Close()
	outTheirs.Close()
	// the client's ends on the poller, as the go-sdk's pipes to a child are
	in, err := net.FileConn(inOurs)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := net.FileConn(outOurs)
	if err != nil {
		tb.Fatal(err)
	}
	inOurs.Close()
	outOurs.Close()
	tb.Cleanup(func() {
		in.Close() // the gateway's end of input: it exits
		out.Close()
		_ = cmd.Wait()
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: out, Writer: in}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkGatewayBinary is BenchmarkGatewayCall with the gateway as a
// client runs it: `bulwark gateway -- UPSTREAM` built from this checkout,
// its own process (three processes in all: this one, the gateway, the
// upstream; two for the direct arm), in alternating blocks of 100 calls.
// The in-process gateway of BenchmarkGatewayCall shares this process's
// scheduler and collector with the client; here the gateway pays its own
// thread wake-ups. -benchtime 20x is 2,000 calls each way.
func BenchmarkGatewayBinary(b *testing.B) {
	dcmd, gcmd := directCommand(), gatewayCommand(b)
	dc, gc := connect(b, dcmd), connect(b, gcmd)
	benchBlocks(b, dc, gc, binaryProbes(dcmd, gcmd)...)
}

// BenchmarkGatewayBinarySocket is BenchmarkGatewayBinary with the gateway's
// stdin and stdout socket pairs (clients on libuv, such as Node.js, hand
// their children sockets, not pipes); the direct arm stays on pipes, as
// the go-sdk's client runs a server.
func BenchmarkGatewayBinarySocket(b *testing.B) {
	benchBlocks(b, direct(b), throughBinarySocket(b))
}

// nodeEverything is the pinned @modelcontextprotocol/server-everything of
// the end-to-end test (test/gateway/package-lock.json), or "" when it is
// not installed there.
func nodeEverything() string {
	p, err := filepath.Abs(filepath.Join("..", "..", "test", "gateway", "node_modules", ".bin", "mcp-server-everything"))
	if err != nil {
		return ""
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// BenchmarkGatewayNode is BenchmarkGatewayFloor in front of a real
// third-party upstream, a Node.js server: the pinned server-everything of
// test/gateway (`npm ci` there, with node on PATH; scripts/test installs
// both; skipped when it is not installed), its echo tool with a 1 KB
// message, called directly, through the C relay (where there is one) and
// through `bulwark gateway`, in rotating blocks of 100 calls.
// -benchtime 20x is 2,000 calls each way.
func BenchmarkGatewayNode(b *testing.B) {
	up, dcmd, gcmd := nodeCommands(b)
	args := map[string]any{"message": kilobyte}
	arms := []*floorArm{sessionArm(b, "direct", connect(b, dcmd), "echo", args)}
	if relay, err := cRelay(); err == nil {
		rcmd := exec.Command(relay, "--", up)
		rcmd.Env = dcmd.Env
		arm := sessionArm(b, "c-relay", connect(b, rcmd), "echo", args)
		arm.pid = rcmd.Process.Pid
		arms = append(arms, arm)
	} else {
		b.Logf("no C relay arm: %v", err)
	}
	arm := sessionArm(b, "gateway", connect(b, gcmd), "every.echo", args)
	arm.pid = gcmd.Process.Pid
	arms = append(arms, arm)
	floor(b, arms)
}

// nodeCommands are the Node.js benchmarks' server-everything (skipped when
// it is not installed), the command that runs it directly, and the gateway
// binary in front of another copy of it ("every.echo").
func nodeCommands(b *testing.B) (up string, direct, gateway *exec.Cmd) {
	up = nodeEverything()
	if up == "" {
		b.Skip("server-everything is not installed: run npm ci in test/gateway")
	}
	bin, err := gatewayBinary()
	if err != nil {
		b.Skip(err)
	}
	env := "PATH=" + os.Getenv("PATH")
	direct = exec.Command(up)
	direct.Env = []string{env}
	home := b.TempDir()
	gateway = exec.Command(bin, "gateway", "--prefix", "every", "--env", "PATH", "--read-only-tools", "echo",
		"--data-dir", filepath.Join(home, "pins"), "--", up)
	gateway.Env = []string{env, "HOME=" + home, "GOGC=100"}
	return up, direct, gateway
}

// cRelay builds testdata/relay.c with the system's C compiler, once, for
// BenchmarkGatewayFloor; an error when there is none.
var cRelay = sync.OnceValues(func() (string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", err
	}
	dir, err := scratch()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "relay")
	if out, err := exec.Command(cc, "-O2", "-pthread", "-o", bin, filepath.Join("testdata", "relay.c")).CombinedOutput(); err != nil {
		return "", fmt.Errorf("cc: %v\n%s", err, out)
	}
	return bin, nil
})

// throughCRelay connects a go-sdk client over stdio to the C relay in
// front of a grandchild of the fake upstream, or returns nil when the
// relay cannot be built.
func throughCRelay(tb testing.TB) *mcp.ClientSession {
	bin, err := cRelay()
	if err != nil {
		tb.Logf("no C relay arm: %v", err)
		return nil
	}
	return connect(tb, cRelayCommand(bin))
}

// cRelayCommand is the C relay bin in front of a grandchild of the fake
// upstream.
func cRelayCommand(bin string) *exec.Cmd {
	cmd := exec.Command(bin, "--", os.Args[0])
	cmd.Env = []string{mcpupstream.EnvVar + "=1", "GOGC=100"}
	return cmd
}

// BenchmarkGatewayFloor runs its arms in rotating blocks of 100 calls, in
// one run: direct; through a relay process in C that only copies bytes, a
// thread per direction blocked in read(2) (testdata/relay.c, built with the
// system's cc; the arm is left out, with a log line, where there is none);
// through the same relay in Go (relay(): a goroutine per direction, the Go
// runtime's scheduler and poller); through that relay reading and writing
// as the gateway does (kernel/pipeio, one processor); and through the
// gateway binary as
// BenchmarkGatewayBinary runs it. c-relay/direct is the floor any process
// between a client and a stdio server costs on the machine (two more pipe
// hops, two more processes to wake); relay/direct that floor with Go's
// runtime in it, pipeio-relay/direct with Go's runtime as the gateway uses
// it; gateway/pipeio-relay what the gateway's own work adds above a Go
// process that does nothing; gateway/direct the ratio.
// -benchtime 20x is 2,000 calls each way.
func BenchmarkGatewayFloor(b *testing.B) {
	arms := []*floorArm{sessionArm(b, "direct", direct(b), "echo", kilobyteArgs)}
	if cs := throughCRelay(b); cs != nil {
		arms = append(arms, sessionArm(b, "c-relay", cs, "echo", kilobyteArgs))
	}
	arms = append(arms, sessionArm(b, "relay", throughRelay(b), "echo", kilobyteArgs),
		sessionArm(b, "pipeio-relay", throughPipeIORelay(b), "echo", kilobyteArgs),
		sessionArm(b, "gateway", throughBinary(b), "fake.echo", kilobyteArgs))
	floor(b, arms)
}

// floorArm is one arm of a floor benchmark: its name and one timed call,
// and the process between the client and the upstream (a relay or the
// gateway; 0 for none), whose CPU per call of this arm floor reports.
type floorArm struct {
	name   string
	call   func() time.Duration
	pid    int
	times  []time.Duration
	sum    time.Duration
	rounds []float64 // each round's ratio to direct
}

// sessionArm is the floor arm that calls tool with args on a go-sdk client
// session.
func sessionArm(b *testing.B, name string, cs *mcp.ClientSession, tool string, args map[string]any) *floorArm {
	return &floorArm{name: name, call: func() time.Duration { return timedCallArgs(b, cs, tool, args) }}
}

// floor runs arms (the first is "direct") in rotating blocks of
// gatewayBlock calls, one round per iteration, and reports each arm's mean
// and p99, each arm's median round ratio to direct, the ratios of arm
// pairs that exist, and the p99 the gateway adds to direct.
func floor(b *testing.B, arms []*floorArm) {
	for range 2 {
		for _, a := range arms {
			for range gatewayBlock {
				a.call()
			}
		}
	}
	round := make([]time.Duration, len(arms))
	probes := make([]*cpuProbe, len(arms)) // each arm's, per call of that arm
	for j, a := range arms {
		probes[j] = &cpuProbe{name: a.name, pid: a.pid, gateway: true}
		probes[j].begin()
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range arms { // each round starts with another arm
			j := (i + k) % len(arms)
			a := arms[j]
			round[j] = 0
			for range gatewayBlock {
				d := a.call()
				noteStall(b, a.name, d)
				a.times = append(a.times, d)
				round[j] += d
			}
			a.sum += round[j]
		}
		for j, a := range arms {
			a.rounds = append(a.rounds, float64(round[j])/float64(round[0]))
		}
	}
	byName := map[string]*floorArm{}
	for j, a := range arms {
		byName[a.name] = a
		b.ReportMetric(float64(a.sum)/float64(len(a.times))/1e3, a.name+"-us/call")
		b.ReportMetric(float64(pct(a.times, 0.99).Microseconds()), a.name+"-p99-us")
		probes[j].report(b, 0, len(a.times))
		if a.name != "direct" {
			slices.Sort(a.rounds)
			b.ReportMetric(a.rounds[len(a.rounds)/2], "median-round-"+a.name+"/direct")
		}
	}
	ratio := func(x, y string) {
		if ax, ay := byName[x], byName[y]; ax != nil && ay != nil {
			b.ReportMetric(float64(ax.sum)/float64(len(ax.times))/(float64(ay.sum)/float64(len(ay.times))), x+"/"+y)
		}
	}
	ratio("c-relay", "direct")
	ratio("relay", "direct")
	ratio("pipeio-relay", "direct")
	ratio("gateway", "c-relay")
	ratio("gateway", "relay")
	ratio("gateway", "pipeio-relay")
	ratio("gateway", "direct")
	ratio("gateway-nofast", "c-relay")
	ratio("gateway-nofast", "gateway")
	ratio("dns-nofast", "dns")
	if g, d := byName["gateway"], byName["direct"]; g != nil && d != nil {
		b.ReportMetric(float64((pct(g.times, 0.99) - pct(d.times, 0.99)).Microseconds()), "p99-added-us")
	}
}

// cpuTime is this process's CPU time (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGatewayCallCPU is the CPU this process spends per call, direct
// (the client alone) and through the in-process gateway (the client, the
// kernel serving it, the gateway's side of the upstream, and their share of
// the collector and the scheduler), over alternating blocks of 200 calls:
// added-cpu-us is the gateway's CPU per relayed call, a figure a loaded
// machine disturbs far less than latency. -benchtime 10x is 2,000 calls
// each way.
func BenchmarkGatewayCallCPU(b *testing.B) {
	ctx := context.Background()
	dc, gc := direct(b), throughGateway(b)
	text := strings.Repeat("x", 1024)
	block := func(cs *mcp.ClientSession, name string) time.Duration {
		start := cpuTime()
		for range 200 {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": text}})
			if err != nil || res.IsError {
				b.Fatalf("%s: %v", name, err)
			}
		}
		return cpuTime() - start
	}
	block(dc, "echo")
	block(gc, "fake.echo")
	var sd, sg time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			sd += block(dc, "echo")
			sg += block(gc, "fake.echo")
		} else {
			sg += block(gc, "fake.echo")
			sd += block(dc, "echo")
		}
	}
	n := float64(b.N * 200)
	b.ReportMetric(float64(sd.Microseconds())/n, "direct-cpu-us")
	b.ReportMetric(float64(sg.Microseconds())/n, "gateway-cpu-us")
	b.ReportMetric(float64((sg-sd).Microseconds())/n, "added-cpu-us")
}

// BenchmarkGatewayCallInterleaved is BenchmarkGatewayCall alternating call
// by call (-benchtime 2000x is 2,000 calls each way): every call follows
// one of the other arm, so the gateway's threads and its child are woken
// from sleep for each call, a state no client using one or the other is in;
// kept for comparison with the earlier figures (docs/performance.md).
func BenchmarkGatewayCallInterleaved(b *testing.B) {
	ctx := context.Background()
	dc, gc := direct(b), throughGateway(b)
	text := strings.Repeat("x", 1024)
	call := func(cs *mcp.ClientSession, name string) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v", name, err)
		}
		return time.Since(start)
	}
	for range 200 {
		call(dc, "echo")
		call(gc, "fake.echo")
	}
	var td, tg []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			td = append(td, call(dc, "echo"))
			tg = append(tg, call(gc, "fake.echo"))
		} else {
			tg = append(tg, call(gc, "fake.echo"))
			td = append(td, call(dc, "echo"))
		}
	}
	reportGateway(b, td, tg)
}

// timedCall calls name with a 1 KB text and returns how long it took.
func timedCall(b *testing.B, cs *mcp.ClientSession, name string) time.Duration {
	return timedCallArgs(b, cs, name, kilobyteArgs)
}

// timedCallArgs calls name with args and returns how long it took.
func timedCallArgs(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) time.Duration {
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %v", name, err, res)
	}
	return time.Since(start)
}

var (
	kilobyte     = strings.Repeat("x", 1024)
	kilobyteArgs = map[string]any{"text": kilobyte}
)

// reportGateway reports the two arms' mean and p99 latencies, their ratio
// and the p99 the gateway adds.
func reportGateway(b *testing.B, td, tg []time.Duration) {
	var sd, sg time.Duration
	for i := range td {
		sd += td[i]
	}
	for i := range tg {
		sg += tg[i]
	}
	b.ReportMetric(float64(sd.Microseconds())/float64(len(td)), "direct-us/call")
	b.ReportMetric(float64(sg.Microseconds())/float64(len(tg)), "gateway-us/call")
	b.ReportMetric(float64(sg)/float64(len(tg))/(float64(sd)/float64(len(td))), "gateway/direct")
	b.ReportMetric(float64(pct(td, 0.99).Microseconds()), "direct-p99-us")
	b.ReportMetric(float64(pct(tg, 0.99).Microseconds()), "gateway-p99-us")
	b.ReportMetric(float64((pct(tg, 0.99) - pct(td, 0.99)).Microseconds()), "p99-added-us")
}

// BenchmarkGatewayCallAllocs: what one call allocates in this process, with
// -benchmem: direct (the client's side only; the server is a child) and
// through the gateway (the client's side, the kernel serving it and the
// gateway's side of the upstream; the upstream is a child). The difference
// is what the gateway allocates per call.
func BenchmarkGatewayCallAllocs(b *testing.B) {
	ctx := context.Background()
	text := strings.Repeat("x", 1024)
	for _, c := range []struct {
		name, tool string
		conn       func(testing.TB) *mcp.ClientSession
	}{{"direct", "echo", direct}, {"gateway", "fake.echo", throughGateway}} {
		b.Run(c.name, func(b *testing.B) {
			cs := c.conn(b)
			for range 100 {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"text": text}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"text": text}})
				if err != nil || res.IsError {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}

// BenchmarkIdleUpstreamMemory: the gateway's heap per idle upstream (its
// session, tool definitions, supervisor), measured over 8 upstreams.
func BenchmarkIdleUpstreamMemory(b *testing.B) {
	const n = 8
	for b.Loop() {
		cfg := gateway.Config{}
		for i := range n {
			u := upstreamConfig().Upstreams[0]
			u.Name = "fake" + string(rune('a'+i))
			cfg.Upstreams = append(cfg.Upstreams, u)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		gw, err := gateway.New(cfg, gateway.Deps{Getenv: getenv})
		if err != nil {
			b.Fatal(err)
		}
		if err := gw.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		if _, err := kernel.New(kernel.Info{Name: "bulwark-gateway"}, gw.Tools(), nil); err != nil {
			b.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		runtime.GC()
		runtime.ReadMemStats(&after)
		gw.Close()
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n/(1<<20), "MiB/upstream")
	}
}
