// Command bareserver is the baseline of the HTTP load benchmark
// (go run ./bench/http): the same trivial tool on a bare go-sdk server,
// mcp.AddTool plus mcp.NewStreamableHTTPHandler with only Stateless set
// (every other option at its default, so answers are SSE streams and the
// SDK's own localhost protection is on), on a plain http.Server with the Go
// runtime's default GC settings — or, with -memory-policy, the one bulwark
// applies (kernel/memory.Apply: GOGC 200, a 256 MiB soft limit), to compare
// like with like.
//
// It prints "READY <url>" on stdout once it listens.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/bench/http/tool"
	"github.com/bulwarkmcp/bulwark/kernel/memory"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	policy := flag.Bool("memory-policy", false, "apply bulwark's GC policy (kernel/memory.Apply) instead of the runtime's defaults")
	flag.Parse()
	if *policy {
		memory.Apply(os.Getenv)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-bare", Version: "v0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: tool.Name, Description: tool.Description},
		func(_ context.Context, _ *mcp.CallToolRequest, in tool.In) (*mcp.CallToolResult, tool.Out, error) {
			return nil, tool.Answer(in), nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareserver:", err)
		os.Exit(1)
	}
	fmt.Println("READY http://" + ln.Addr().String() + "/mcp")
	if err := (&http.Server{Handler: mux}).Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "bareserver:", err)
		os.Exit(1)
	}
}
