package observe_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/observe"
)

// BenchmarkToolCallObserved is one tools/call through an in-memory client,
// with observation off (the baseline: Options.Observer nil), metrics on,
// and metrics and traces on (spans to an in-memory recorder).
//
//	go test -run '^$' -bench ToolCallObserved -benchmem -count 5 ./kernel/observe/
func BenchmarkToolCallObserved(b *testing.B) {
	for _, tc := range []struct {
		name string
		obs  func() kernel.Observer
	}{
		{"off", func() kernel.Observer { return nil }},
		{"metrics", func() kernel.Observer {
			o, _ := observe.New(&observe.Options{Registerer: prometheus.NewRegistry()})
			return o
		}},
		{"metrics+traces", func() kernel.Observer {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
			o, _ := observe.New(&observe.Options{Registerer: prometheus.NewRegistry(), TracerProvider: tp})
			return o
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cs := benchSession(b, tc.obs())
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchSession(b *testing.B, obs kernel.Observer) *mcp.ClientSession {
	ping := kernel.NewTool(kernel.Spec[struct{}, map[string]any]{
		Name: "ping", Description: "Answer.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, struct{}) (map[string]any, error) { return map[string]any{}, nil },
	})
	opts := &kernel.Options{}
	if obs != nil {
		opts.Observer = obs
	}
	srv, err := kernel.New(kernel.Info{Name: "b"}, []kernel.Tool{ping}, opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}
