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

// leanClient is the least a client can be: it writes a tools/call line to
// a child's stdin and reads lines from its stdout until the answer,
// parsing nothing but a check that it is a result and not a tool error.
// It spends next to no CPU, where the go-sdk's client spends about as
// much as the upstream does: BenchmarkGatewayLeanClient tells what the
// ratio owes to the client competing for the machine's processors. It
// speaks 2026-07-28 (each request's _meta carrying what initialize did),
// or, started by startLeanLegacy, 2025-06-18 after an initialize.
type leanClient struct {
	in     io.WriteCloser
	out    *bufio.Reader
	buf    []byte
	id     int
	legacy bool   // 2025-06-18: no _meta, after initialize
	key    string // the argument the 1 KB text goes in ("text" when empty)
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

// startLeanLegacy is startLean with a 2025-06-18 session: initialize, its
// answer, then notifications/initialized.
func startLeanLegacy(tb testing.TB, cmd *exec.Cmd, key string) *leanClient {
	c := startLean(tb, cmd)
	c.legacy, c.key = true, key
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lean","version":"1"}}}`+"\n"); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.answer(0); err != nil {
		tb.Fatalf("initialize: %v", err)
	}
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		tb.Fatal(err)
	}
	return c
}

const leanMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"lean","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// answer reads lines until the response with id, and returns it.
func (c *leanClient) answer(id int) ([]byte, error) {
	want := strconv.AppendInt([]byte(`"id":`), int64(id), 10)
	for {
		line, err := c.out.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		// a notification, or a request of the server's, has no such id
		if i := bytes.Index(line, want); i >= 0 && i+len(want) < len(line) && (line[i+len(want)] == ',' || line[i+len(want)] == '}') {
			return line, nil
		}
	}
}

// call calls the tool name with a 1 KB text and returns how long the
// answer took.
func (c *leanClient) call(tb testing.TB, name string) time.Duration {
	c.id++
	key := c.key
	if key == "" {
		key = "text"
	}
	b := append(c.buf[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(c.id), 10)
	b = append(b, `,"method":"tools/call","params":{`...)
	if !c.legacy {
		b = append(b, leanMeta+`,`...)
	}
	b = append(b, `"name":"`...)
	b = append(b, name...)
	b = append(append(append(b, `","arguments":{"`...), key...), `":"`...)
	b = append(b, kilobyte...)
	b = append(b, "\"}}}\n"...)
	c.buf = b
	start := time.Now()
	if _, err := c.in.Write(b); err != nil {
		tb.Fatal(err)
	}
	line, err := c.answer(c.id)
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	if !bytes.Contains(line, []byte(`"result":`)) || bytes.Contains(line, []byte(`"isError":true`)) {
		tb.Fatalf("%s: %.300s", name, line)
	}
	return d
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

// BenchmarkGatewayLeanFloor is BenchmarkGatewayFloor with lean clients
// (leanClient): the fake upstream directly, through the C relay (left out,
// with a log line, where there is no C compiler), through the Go relay
// that reads and writes as the gateway does (pipeio-relay, since session
// 11) and through `bulwark gateway`, in rotating blocks of 100 calls.
// c-relay/direct is what any process between this client and the upstream
// costs on the machine; gateway/c-relay what the gateway's own work adds to
// that; gateway/pipeio-relay what it adds above Go's runtime and poller.
// The middle processes' CPU per call is reported too. -benchtime 20x is
// 2,000 calls each way.
func BenchmarkGatewayLeanFloor(b *testing.B) {
	dc := startLean(b, directCommand())
	arms := []*floorArm{{name: "direct", call: func() time.Duration { return dc.call(b, "echo") }}}
	if bin, err := cRelay(); err == nil {
		rcmd := cRelayCommand(bin)
		rc := startLean(b, rcmd)
		arms = append(arms, &floorArm{name: "c-relay", call: func() time.Duration { return rc.call(b, "echo") }, pid: rcmd.Process.Pid})
	} else {
		b.Logf("no C relay arm: %v", err)
	}
	pcmd := pipeIORelayCommand()
	pc := startLean(b, pcmd)
	arms = append(arms, &floorArm{name: "pipeio-relay", call: func() time.Duration { return pc.call(b, "echo") }, pid: pcmd.Process.Pid})
	gcmd := gatewayCommand(b)
	gc := startLean(b, gcmd)
	arms = append(arms, &floorArm{name: "gateway", call: func() time.Duration { return gc.call(b, "fake.echo") }, pid: gcmd.Process.Pid})
	floor(b, arms)
}

// BenchmarkGatewayNodeLeanClient is BenchmarkGatewayNode's direct and
// gateway arms with a lean client speaking 2025-06-18 to both (the Node.js
// server speaks no 2026-07-28): what the gateway adds to a real upstream
// whose calls cost little, in alternating blocks of 100 calls. Skipped
// when server-everything is not installed (npm ci in test/gateway).
func BenchmarkGatewayNodeLeanClient(b *testing.B) {
	_, dcmd, gcmd := nodeCommands(b)
	dc, gc := startLeanLegacy(b, dcmd, "message"), startLeanLegacy(b, gcmd, "message")
	gc.call(b, "every.echo")
	blocks(b, func() time.Duration { return dc.call(b, "echo") },
		func() time.Duration { return gc.call(b, "every.echo") }, binaryProbes(dcmd, gcmd)...)
}
