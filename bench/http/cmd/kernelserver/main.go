// Command kernelserver is bulwark's server in the HTTP load benchmark
// (go run ./bench/http): one trivial read-only tool through kernel.New and
// Server.ServeHTTP, with every guard on — flood, Host, Origin/CORS, method,
// content type, body size, trace headers, authentication (the loopback
// default, principal "local"), header agreement, and admission (tier check
// and a per-principal rate limit) — plus the JSON audit record of every call
// (written to io.Discard, so its encoding is paid).
//
// Two limits are raised so that the benchmark's own loopback traffic is not
// refused: the flood guard (default 100 requests per 10 s per address) and
// the per-principal rate limit (default 100 a minute). Both guards still run
// on every request; they just never say no.
//
// Memory policy: the go-sdk's request decoding allocates about 300 KB per
// tools/call (a fresh 32 KiB decoder buffer for each of its nine JSON
// decodes), so with the runtime's default GOGC=100 and a live heap of a few
// MB the process collects every dozen requests and is bound by garbage
// collection. This server therefore applies kernel/memory.Apply, as
// the bulwark binary does when it serves HTTP (GOGC=200, a 256 MiB soft
// memory limit); the GOGC and GOMEMLIMIT environment variables override it,
// and -no-memory-policy measures without it.
//
// It prints "READY <url>" on stdout once it listens, after
// "PPROF <url>" when -pprof serves pprof.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served only with -pprof, on its own listener
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bulwarkmcp/bulwark/bench/http/tool"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/memory"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

// unrefused is a limit the benchmark never reaches.
const unrefused = 1 << 30

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	pprofAddr := flag.String("pprof", "", "serve net/http/pprof on this loopback `address` (off when empty)")
	noFast := flag.Bool("disable-fast-path", false, "send every request through the go-sdk's handler (kernel.HTTPOptions.DisableFastPath)")
	noPolicy := flag.Bool("no-memory-policy", false, "keep the runtime's GC settings instead of the one bulwark ships (for comparison)")
	flag.Parse()
	if !*noPolicy {
		memory.Apply(os.Getenv)
	}
	if err := run(*addr, *pprofAddr, *noFast); err != nil {
		fmt.Fprintln(os.Stderr, "kernelserver:", err)
		os.Exit(1)
	}
}

func run(addr, pprofAddr string, noFast bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if pprofAddr != "" {
		ln, err := net.Listen("tcp", pprofAddr)
		if err != nil {
			return err
		}
		go http.Serve(ln, http.DefaultServeMux)
		fmt.Println("PPROF http://" + ln.Addr().String() + "/debug/pprof/")
	}
	srv, err := newServer()
	if err != nil {
		return err
	}
	opts := kernel.HTTPOptions{Addr: addr, DisableFastPath: noFast}
	opts.Guards.Flood = &httpguard.FloodOptions{Limit: unrefused, Window: 10 * time.Second}
	return srv.ListenAndServe(ctx, opts, func(a string) { fmt.Println("READY http://" + a + kernel.MCPPath) })
}

func newServer() (*kernel.Server, error) {
	tiers, err := ratelimit.NewTiers(ratelimit.DefaultPlans...)
	if err != nil {
		return nil, err
	}
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: unrefused, Window: time.Minute})
	if err != nil {
		return nil, err
	}
	t := kernel.NewTool(kernel.Spec[tool.In, tool.Out]{
		Name: tool.Name, Description: tool.Description,
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes,
			OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(_ context.Context, _ *kernel.Call, in tool.In) (tool.Out, error) { return tool.Answer(in), nil },
	})
	return kernel.New(kernel.Info{Name: "bench-bulwark", Version: "v0"}, []kernel.Tool{t}, &kernel.Options{
		Tiers:   tiers,
		Limiter: lim,
		Audit:   audit.NewJSONLines(io.Discard),
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}
