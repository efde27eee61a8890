// Package gateway_test benchmarks bulwark gateway beside direct use, in one
// run: a go-sdk client calling a stdio MCP server (the fake upstream, a
// child process) directly, and the same client calling the same tool
// through the gateway (kernel pipeline, envelope, audit) in front of
// another child of the same server, interleaved call by call.
//
//	go test -run '^$' -bench . -benchtime 2000x ./bench/gateway/
package gateway_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
	"github.com/bulwarkmcp/bulwark/servers/gateway/pin"
)

func TestMain(m *testing.M) {
	mcpupstream.MaybeServe()
	os.Exit(m.Run())
}

func getenv(n string) string {
	if n == mcpupstream.EnvVar {
		return "1"
	}
	return ""
}

func upstreamConfig() gateway.Config {
	return gateway.Config{Upstreams: []gateway.Upstream{{Name: "fake", Command: os.Args[0], Env: []string{mcpupstream.EnvVar}, ReadOnlyTools: []string{"echo"}}}}
}

// direct connects a go-sdk client to a child over stdio.
func direct(tb testing.TB) *mcp.ClientSession {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{mcpupstream.EnvVar + "=1"}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// throughGateway connects a go-sdk client (in memory) to a gateway in
// front of a child over stdio, built as the CLI builds it: a pin file
// (trust on first use) and a tool set that may change at run time.
func throughGateway(tb testing.TB) *mcp.ClientSession {
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
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ks.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkGatewayCall: a trivial call returning 1 KB, direct vs through the
// gateway. gateway/direct is the ratio the issue bounds (at most 1.25), and
// p99-added-us the added p99 latency (under 1 ms).
func BenchmarkGatewayCall(b *testing.B) {
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
	var sd, sg time.Duration
	for i := range td {
		sd += td[i]
		sg += tg[i]
	}
	n := float64(len(td))
	b.ReportMetric(float64(sd.Microseconds())/n, "direct-us/call")
	b.ReportMetric(float64(sg.Microseconds())/n, "gateway-us/call")
	b.ReportMetric(float64(sg)/float64(sd), "gateway/direct")
	b.ReportMetric(float64(pct(td, 0.99).Microseconds()), "direct-p99-us")
	b.ReportMetric(float64(pct(tg, 0.99).Microseconds()), "gateway-p99-us")
	b.ReportMetric(float64((pct(tg, 0.99) - pct(td, 0.99)).Microseconds()), "p99-added-us")
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
