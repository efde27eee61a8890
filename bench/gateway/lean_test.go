package gateway_test

import (
	"bufio"
	"bytes"

	"io"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// leanClient is the least a client can be: it writes a 2026-07-28
// tools/call line (the request's _meta carrying what initialize did) to a
// child's stdin and reads lines from its stdout until the answer, parsing
// nothing but a check that it is a result and not a tool error. It
// spends next to no CPU, where the go-sdk's client spends about as much
// as the upstream does: BenchmarkGatewayLeanClient tells what the ratio
// owes to the client competing for the machine's processors.
type leanClient struct {
	in  io.WriteCloser
	out *bufio.Reader
	buf []byte
	id  int
}

// startLean starts cmd with a lean client on its stdin and stdout, stopped
// when the benchmark ends.
func startLean(tb testing.TB, cmd *exec.Cmd) *leanClient {
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	return &leanClient{in: in, out: bufio.NewReaderSize(out, 64<<10)}
}

const leanMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"lean","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// call calls the tool name with a 1 KB text and returns how long the
// answer took.
func (c *leanClient) call(tb testing.TB, name string) time.Duration {
	c.id++
	b := append(c.buf[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(c.id), 10)
	b = append(b, `,"method":"tools/call","params":{`+leanMeta+`,"name":"`...)
	b = append(b, name...)
	b = append(b, `","arguments":{"text":"`...)
	b = append(b, kilobyte...)
	b = append(b, "\"}}}\n"...)
	c.buf = b
	start := time.Now()
	if _, err := c.in.Write(b); err != nil {
		tb.Fatal(err)
	}
	for {
		line, err := c.out.ReadSlice('\n')
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		if !bytes.Contains(line[:min(len(line), 64)], []byte(`"id":`)) {
			continue // a notification
		}
		d := time.Since(start)
		if !bytes.Contains(line, []byte(`"result":`)) || bytes.Contains(line, []byte(`"isError":true`)) {
			tb.Fatalf("%s: %.300s", name, line)
		}
		return d
	}
}

// BenchmarkGatewayLeanClient is BenchmarkGatewayBinary with a lean client
// (leanClient) in place of the go-sdk's: the fake upstream directly and
// through `bulwark gateway` in front of another child of it, in
// alternating blocks of 100 calls. -benchtime 20x is 2,000 calls each way.
func BenchmarkGatewayLeanClient(b *testing.B) {
	dcmd, gcmd := directCommand(), gatewayCommand(b)
	dc, gc := startLean(b, dcmd), startLean(b, gcmd)
	gc.call(b, "fake.echo") // the gateway has started its upstream: binaryProbes finds it
	blocks(b, func() time.Duration { return dc.call(b, "echo") },
		func() time.Duration { return gc.call(b, "fake.echo") }, binaryProbes(dcmd, gcmd)...)
}
