package gateway

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
)

// hop starts a gateway in front of the fake upstream and returns its
// link's session and connection, and the params of a 1 KB echo call as
// Gateway.call builds them.
func hop(b *testing.B) (*mcp.ClientSession, *stdioConn, func() *mcp.CallToolParams) {
	g, err := New(Config{Upstreams: []Upstream{{Name: "fake", Command: os.Args[0], Env: []string{mcpupstream.EnvVar}, PublicEnv: []string{mcpupstream.EnvVar}, ReadOnlyTools: []string{"echo"}}}},
		Deps{Getenv: func(n string) string {
			if n == mcpupstream.EnvVar {
				return "1"
			}
			return ""
		}})
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Close)
	l := g.links[0]
	args, _ := json.Marshal(map[string]any{"text": strings.Repeat("x", 1024)})
	return l.sess, l.conn, func() *mcp.CallToolParams {
		p := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(args)}
		p.SetProgressToken("bench")
		p.Meta[mcp.MetaKeyLogLevel] = "info"
		return p
	}
}

// BenchmarkUpstreamHop: the gateway's hop to a stdio upstream alone — the
// relayed call on the gateway's own connection (rawcall.go) beside the
// same call through the go-sdk client session on the same connection,
// interleaved call by call. raw/sdk is the ratio of their mean times.
func BenchmarkUpstreamHop(b *testing.B) {
	ctx := context.Background()
	sess, conn, params := hop(b)
	raw := func() time.Duration {
		start := time.Now()
		if res, err := rawCallTool(ctx, conn, params(), 0); err != nil || res.IsError {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	sdk := func() time.Duration {
		start := time.Now()
		if res, err := sess.CallTool(ctx, params()); err != nil || res.IsError {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 200 {
		raw()
		sdk()
	}
	var tr, ts []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			tr, ts = append(tr, raw()), append(ts, sdk())
		} else {
			ts, tr = append(ts, sdk()), append(tr, raw())
		}
	}
	mean := func(d []time.Duration) float64 {
		var s time.Duration
		for _, x := range d {
			s += x
		}
		return float64(s.Microseconds()) / float64(len(d))
	}
	p99 := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[min(len(s)-1, len(s)*99/100)].Microseconds())
	}
	b.ReportMetric(mean(tr), "raw-us/call")
	b.ReportMetric(mean(ts), "sdk-us/call")
	b.ReportMetric(mean(tr)/mean(ts), "raw/sdk")
	b.ReportMetric(p99(tr), "raw-p99-us")
	b.ReportMetric(p99(ts), "sdk-p99-us")
}

// BenchmarkUpstreamHopAllocs: what one call of the hop allocates in the
// gateway (-benchmem), on each path.
func BenchmarkUpstreamHopAllocs(b *testing.B) {
	ctx := context.Background()
	sess, conn, params := hop(b)
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rawCallTool(ctx, conn, params(), 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sess.CallTool(ctx, params()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppendCall: encoding a relayed 1 KB call (the kernel's
// arguments, compact and HTML-escaped, checked by plainCompact) into its
// request line.
func BenchmarkAppendCall(b *testing.B) {
	args, _ := json.Marshal(map[string]any{"text": strings.Repeat("x", 1024)})
	p := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(args), Meta: mcp.Meta{mcp.MetaKeyLogLevel: "info"}}
	sdk := []byte(`"io.modelcontextprotocol/clientInfo":{"name":"bulwark-gateway","version":"v1"}`)
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		if _, err := appendCall(buf[:0], "bulwark-gw-1", sdk, p); err != nil {
			b.Fatal(err)
		}
	}
}
