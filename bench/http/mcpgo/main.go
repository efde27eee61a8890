// Command mcpgo is a baseline of the HTTP load benchmark (go run ./bench/http):
// the benchmark's trivial tool on github.com/mark3labs/mcp-go, served by its
// stateless Streamable HTTP server (server.NewStreamableHTTPServer with
// WithStateLess(true), every other option at its default) on a plain
// http.Server, with the Go runtime's default GC settings.
//
// -validate switches on mcp-go's input and output schema validation
// (server.WithInputSchemaValidation, server.WithOutputSchemaValidation),
// which bulwark always does for input.
//
// It is its own Go module so that mcp-go stays out of bulwark's go.mod; the
// tool is declared here again (bench/http/tool in the main module is the
// reference: name get_rrset, arguments zone and name, a four-field answer).
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

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// In and Out are bench/http/tool's In and Out.
type In struct {
	Zone string `json:"zone" jsonschema:"the zone"`
	Name string `json:"name" jsonschema:"the name"`
}

type Out struct {
	Zone  string `json:"zone"`
	Name  string `json:"name"`
	TTL   int    `json:"ttl"`
	Value string `json:"value"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	validate := flag.Bool("validate", false, "validate tool arguments and results against their schemas")
	flag.Parse()
	var opts []server.ServerOption
	if *validate {
		opts = append(opts, server.WithInputSchemaValidation(), server.WithOutputSchemaValidation())
	}
	s := server.NewMCPServer("bench-mcpgo", "v0", opts...)
	s.AddTool(mcp.NewTool("get_rrset",
		mcp.WithDescription("Get an RRSet."),
		mcp.WithInputSchema[In](),
		mcp.WithOutputSchema[Out](),
	), mcp.NewStructuredToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in In) (Out, error) {
		return Out{Zone: in.Zone, Name: in.Name, TTL: 300, Value: "198.51.100.7"}, nil
	}))
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo:", err)
		os.Exit(1)
	}
	fmt.Println("READY http://" + ln.Addr().String() + "/mcp")
	if err := (&http.Server{Handler: h}).Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo:", err)
		os.Exit(1)
	}
}
