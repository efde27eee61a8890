package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestStdioConnEndlessLineIsCut (budget): a child that writes one endless
// line without a newline is cut at the line cap: Read fails with
// errLineTooLong once the cap is passed, having allocated about the cap,
// not what the child wrote, and Close ends the child through kill.
func TestStdioConnEndlessLineIsCut(t *testing.T) {
	u := &Upstream{Name: "flood", Command: "/bin/sh", Args: []string{"-c", "while :; do printf '%s' aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; done"}, MaxResultBytes: 64 << 10}
	p, tr, err := spawn(u, func(string) string { return "" }, slog.New(slog.DiscardHandler), &scrubber{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.kill()
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = conn.Read(ctx)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errLineTooLong) {
		t.Fatalf("Read = %v, want errLineTooLong", err)
	}
	// The cap is 2×64 KiB + 64 KiB; appending grows a slice to at most
	// about twice what it holds, so 4× the cap bounds every allocation.
	if a, limit := after.TotalAlloc-before.TotalAlloc, uint64(4*maxLine(u)); a > limit {
		t.Errorf("reading the endless line allocated %d bytes, want ≤ %d", a, limit)
	}
	if err := conn.Close(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Logf("Close: %v", err)
	}
	p.kill()
	select {
	case <-p.done:
	default:
		t.Fatal("the child outlived kill")
	}
}

// TestStdioConnReadHonoursContext: a Read waiting on a silent child
// returns when its context ends, and Close unblocks a waiting Read.
func TestStdioConnReadHonoursContext(t *testing.T) {
	r, w := io.Pipe()
	_, w2 := io.Pipe()
	conn, _ := (&stdioTransport{r: r, w: w2, maxLine: 1024}).Connect(context.Background())
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := conn.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read = %v, want the context's error", err)
	}
	done := make(chan error, 1)
	go func() { _, err := conn.Read(context.Background()); done <- err }()
	conn.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Read after Close returned a message")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
}

// TestStdioConnRoundTrip: messages written arrive one a line; lines read
// (CRLF, blank lines, a last line without newline) decode in order; a
// batch is refused.
func TestStdioConnRoundTrip(t *testing.T) {
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\n  \n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]\n"
	var out bytes.Buffer
	conn, _ := (&stdioTransport{r: io.NopCloser(strings.NewReader(in)), w: nopWriteCloser{&out}, maxLine: 1024}).Connect(context.Background())
	ctx := context.Background()
	m, err := conn.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); err != nil || !ok || resp.ID.Raw() != int64(1) {
		t.Fatalf("first Read = %#v, %v", m, err)
	}
	m, err = conn.Read(ctx)
	if req, ok := m.(*jsonrpc.Request); err != nil || !ok || req.Method != "notifications/x" {
		t.Fatalf("second Read = %#v, %v", m, err)
	}
	if _, err := conn.Read(ctx); err == nil || !strings.Contains(err.Error(), "batch") {
		t.Fatalf("batch Read = %v, want refused", err)
	}
	id, _ := jsonrpc.MakeID(int64(7))
	if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/list"}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasSuffix(got, "}\n") || strings.Count(got, "\n") != 1 || !strings.Contains(got, `"tools/list"`) {
		t.Fatalf("written %q", got)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// FuzzLineReader: whatever a child writes, every line returned is within
// the cap, holds no newline, and the lines are the input's non-blank
// lines in order, until the first over-long one.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\r\n"), 16)
	f.Add([]byte("\n\n\r\n  \nx"), 1)
	f.Add([]byte(strings.Repeat("a", 100)+"\nb\n"), 20)
	f.Add([]byte("abc\r"), 3)
	f.Add([]byte("abcd\r\n"), 4)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		lr := newLineReader(bytes.NewReader(in), max)
		// The model: lines in order, "\r" ends trimmed; blank ones skipped;
		// the first over max (blank or not) ends the reading.
		var want [][]byte
		tooLong := false
		for _, l := range bytes.Split(in, []byte("\n")) {
			l = bytes.TrimSuffix(l, []byte("\r"))
			if len(l) > max {
				tooLong = true
				break
			}
			if len(bytes.TrimSpace(l)) > 0 {
				want = append(want, l)
			}
		}
		for i := 0; ; i++ {
			line, err := lr.next()
			if err != nil {
				switch {
				case i != len(want):
					t.Fatalf("line %d: %v, want %q", i, err, want[i])
				case tooLong && !errors.Is(err, errLineTooLong):
					t.Fatalf("after %d lines: %v, want errLineTooLong", i, err)
				case !tooLong && err != io.EOF:
					t.Fatalf("after %d lines: %v, want EOF", i, err)
				}
				return
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line %d %q over the cap %d or holding a newline", i, line, max)
			}
			if i >= len(want) || !bytes.Equal(line, want[i]) {
				t.Fatalf("line %d = %q, want %q", i, line, want)
			}
		}
	})
}
