package kernel

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxStdioLine bounds one JSON-RPC message over stdio, like the HTTP body
// limit.
const MaxStdioLine = 3 << 20

// ServeStdio serves the MCP protocol over in and out (the process's stdin
// and stdout) until ctx ends or the client closes its side. The principal is
// "local".
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: MaxStdioLine})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
