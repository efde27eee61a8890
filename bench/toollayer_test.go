package bench

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

type echoIn struct {
	Zone string `json:"zone" jsonschema:"the zone"`
	Name string `json:"name" jsonschema:"the name"`
}

type echoOut struct {
	Zone  string `json:"zone"`
	Name  string `json:"name"`
	TTL   int    `json:"ttl"`
	Value string `json:"value"`
}

func echo(in echoIn) echoOut {
	return echoOut{Zone: in.Zone, Name: in.Name, TTL: 300, Value: "198.51.100.7"}
}

// bareServer is the baseline: the same tool on a go-sdk server with the
// SDK's own typed AddTool (schema inference, validation, structured output).
func bareServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "v0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_rrset", Description: "Get an RRSet."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return nil, echo(in), nil
		})
	return s
}

// kernelServer is the same tool through the whole tool layer: policy,
// tier and rate-limit admission, validation, envelope on text and
// structured content, audit (to a sink that drops records).
func kernelServer(tb testing.TB) mcptest.Server {
	tool := kernel.NewTool(kernel.Spec[echoIn, echoOut]{
		Name: "get_rrset", Description: "Get an RRSet.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(ctx context.Context, c *kernel.Call, in echoIn) (echoOut, error) { return echo(in), nil },
	})
	s, err := kernel.New(kernel.Info{Name: "kernel", Version: "v0"}, []kernel.Tool{tool}, &kernel.Options{Envelope: kernelEnvelope})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func connect(tb testing.TB, s mcptest.Server) *mcp.ClientSession {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
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

// BenchmarkToolCall measures one tools/call round trip in process, through
// the kernel and through a bare go-sdk server, interleaved. kernel/bare is
// the ratio the issue bounds (at most 1.15).
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	bare, kern := connect(b, bareServer()), connect(b, kernelServer(b))
	params := &mcp.CallToolParams{Name: "get_rrset", Arguments: map[string]any{"zone": "example.com", "name": "www"}}
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v", err)
		}
		return time.Since(start)
	}
	for range 200 { // warm up both
		call(bare)
		call(kern)
	}
	var tb, tk time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			tb += call(bare)
			tk += call(kern)
		} else {
			tk += call(kern)
			tb += call(bare)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(tb.Nanoseconds())/n, "bare-ns/call")
	b.ReportMetric(float64(tk.Nanoseconds())/n, "kernel-ns/call")
	b.ReportMetric(float64(tk)/float64(tb), "kernel/bare")
}
