package kernel_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
)

// floodServer serves one tool that sends 1 KiB progress notifications until
// its context ends (or 4 Mi of them), over a real loopback socket. sent
// counts the notifications handed to Call.Progress; stopped receives when
// the handler returns.
func floodServer(t *testing.T, disableFast bool) (addr string, sent *atomic.Int64, stopped chan struct{}) {
	t.Helper()
	sent, stopped = new(atomic.Int64), make(chan struct{}, 1)
	msg := strings.Repeat("x", 1024)
	tool := kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "progress_flood", Description: "Floods progress.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			defer func() { stopped <- struct{}{} }()
			for i := 0; ctx.Err() == nil && i < 4<<20; i++ {
				c.Progress(ctx, float64(i), 0, msg)
				sent.Add(1)
			}
			return map[string]string{}, nil
		},
	})
	srv, err := kernel.New(kernel.Info{Name: "flood", Version: "v0"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.HTTPHandler(kernel.HTTPOptions{Addr: fastAddr, DisableFastPath: disableFast, Guards: httpguard.PipelineOptions{DisableFlood: true}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String(), sent, stopped
}

// startFlood sends the flooding call on a raw connection and reads the
// response head and the first event.
func startFlood(t *testing.T, addr string) net.Conn {
	t.Helper()
	body := call(`1`, `"progress_flood"`, `{"zone":"z","name":"n"}`, strings.Replace(modernMeta, `{`, `{"progressToken":"p",`, 1))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.WriteString(conn, "POST "+kernel.MCPPath+" HTTP/1.1\r\nHost: "+fastAddr+"\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: progress_flood\r\n"+
		"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReaderSize(conn, 4096)
	head, err := br.ReadString('\n')
	if err != nil || !strings.Contains(head, "200") {
		t.Fatalf("response %q: %v", head, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			if !strings.Contains(line, `"notifications/progress"`) {
				t.Fatalf("first event %.200q", line)
			}
			return conn
		}
	}
}

// TestFastPathProgressBudget: a handler flooding progress to a client that
// stops reading is held back by the socket — the fast path queues nothing,
// so the notifications in flight stay within the kernel's socket buffers
// and the heap does not grow with them — and when the client leaves, the
// handler's context is cancelled, it returns, and no goroutine is left.
//
// The go-sdk's path (DisableFastPath) holds back the stalled flood alike
// (~3,400 1 KiB events in flight on loopback, no heap growth) but, measured
// on v1.8.0, does not end the handler when the client leaves while it is
// blocked writing (still running 100 s later): this test fails there.
func TestFastPathProgressBudget(t *testing.T) {
	addr, sent, stopped := floodServer(t, false)
	before := runtime.NumGoroutine()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	conn := startFlood(t, addr)
	// The client reads no more: wait for the handler to block (the count
	// stops moving for 200 ms), at most 10 s.
	a, b := int64(-1), sent.Load()
	for end := time.Now().Add(10 * time.Second); a != b && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		a, b = b, sent.Load()
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("notifications sent to a stalled client: %d (%d KiB), then %d more in 200 ms; heap %+d KiB", a, a, b-a, (int64(m1.HeapAlloc)-int64(m0.HeapAlloc))>>10)
	if b != a {
		t.Errorf("the handler kept sending to a client that reads nothing (%d then %d): something queues", a, b)
	}
	if a > 64<<10 { // 64 MiB of 1 KiB events: far beyond loopback socket buffers
		t.Errorf("%d notifications in flight to a stalled client", a)
	}
	if grown := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grown > 8<<20 {
		t.Errorf("heap grew %d bytes while the client stalled", grown)
	}
	_ = conn.Close()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler still runs 5 s after the client left: its context was not cancelled")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines: %d before the call, %d after the client left", before, n)
	}
}

// BenchmarkFastPathProgress: a 2026-07-28 tools/call that reports progress
// four times, answered as an event stream, with the fast path on (fast) and
// off (go-sdk), in-process through the whole HTTP handler (every guard,
// authentication, rate limit). docs/performance.md holds the ratio.
func BenchmarkFastPathProgress(b *testing.B) {
	p := newFastPair(b, 1<<30)
	q := fastRequest{name: "progress", body: call(`1`, `"progress_steps"`, `{"zone":"z","name":"n"}`, strings.Replace(modernMeta, `{`, `{"progressToken":"p",`, 1)), version: "2026-07-28", mirror: true}
	for _, path := range []struct {
		name string
		fast bool
	}{{"fast", true}, {"go-sdk", false}} {
		b.Run(path.name, func(b *testing.B) {
			h := p.sdk
			if path.fast {
				h = p.fast
			}
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, q.build())
				if rec.Code != 200 || strings.Count(rec.Body.String(), "event: message") != 5 {
					b.Fatalf("status %d: %.300s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// relayTool reports progress and logs from another goroutine with another
// context than its call's, as the gateway relays its upstream's progress
// from the upstream session's notification handler: the Call carries its
// way to the client (Call.stream), not the context or a global table.
func relayTool() kernel.Tool {
	return kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "relay_progress", Description: "Relays progress.", Policy: readPolicy,
		Handle: func(_ context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.Progress(context.Background(), 1, 2, "half")
				c.Log(context.Background(), slog.LevelWarn, "relayed", nil)
			}()
			<-done
			return map[string]string{}, nil
		},
	})
}

// TestFastPathNotifiesFromAnotherContext: on both fronts' fast paths, a
// handler's progress and log sent with another context than its call's
// reach the call's client, before the response.
func TestFastPathNotifiesFromAnotherContext(t *testing.T) {
	srv, err := kernel.New(kernel.Info{Name: "relay", Version: "v0"}, []kernel.Tool{relayTool()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.HTTPHandler(kernel.HTTPOptions{Addr: fastAddr, Guards: httpguard.PipelineOptions{DisableFlood: true}})
	if err != nil {
		t.Fatal(err)
	}
	meta := strings.Replace(modernMeta, `{`, `{"progressToken":"p","io.modelcontextprotocol/logLevel":"info",`, 1)
	q := fastRequest{name: "relay", body: call(`1`, `"relay_progress"`, `{"zone":"z","name":"n"}`, meta), version: "2026-07-28", mirror: true}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, q.build())
	body := w.Body.String()
	p, l, r := strings.Index(body, `"notifications/progress"`), strings.Index(body, `"notifications/message"`), strings.Index(body, `"result"`)
	if p < 0 || l < 0 || r < p || r < l || kernel.FastAnswered(srv) != 1 {
		t.Fatalf("HTTP fast path (answered %d): %s", kernel.FastAnswered(srv), body)
	}

	srv, err = kernel.New(kernel.Info{Name: "relay", Version: "v0"}, []kernel.Tool{relayTool()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newStdioRoundTrip(t, srv, false)
	first := c.do(t, call(`2`, `"relay_progress"`, `{"zone":"z","name":"n"}`, `{"progressToken":"p"}`))
	if !strings.Contains(first, `"notifications/progress"`) || kernel.FastAnswered(srv) != 1 {
		t.Fatalf("stdio fast path (answered %d): first line %s", kernel.FastAnswered(srv), first)
	}
}
