package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLimitDefaultsFitTheDeployment: no per-principal limit over stdio,
// limits sized for an agent on a loopback listener, the strict defaults
// beyond loopback; a value given (flag or variable) always wins.
func TestLimitDefaultsFitTheDeployment(t *testing.T) {
	for _, tc := range []struct {
		name        string
		vars        map[string]string
		args        []string
		rate, flood int
	}{
		{"stdio", nil, nil, 0, 0},
		{"stdio, limit asked for", nil, []string{"-rate-limit", "100"}, 100, 0},
		{"loopback", nil, []string{"-http", "127.0.0.1:8080"}, 1000, 1000},
		{"bare port is loopback", nil, []string{"-http", ":8080"}, 1000, 1000},
		{"localhost", nil, []string{"-http", "localhost:8080"}, 1000, 1000},
		{"IPv6 loopback", nil, []string{"-http", "[::1]:8080"}, 1000, 1000},
		{"every interface", nil, []string{"-http", "0.0.0.0:8080"}, 100, 100},
		{"a named interface", nil, []string{"-http", "192.0.2.10:8080"}, 100, 100},
		{"explicit flags win", nil, []string{"-http", "0.0.0.0:8080", "-rate-limit", "0", "-flood-limit", "5000"}, 0, 5000},
		{"variables win", map[string]string{"BULWARK_RATE_LIMIT": "7", "BULWARK_FLOOD_LIMIT": "9"}, []string{"-http", "127.0.0.1:8080"}, 7, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s serving
			env := &fakeEnv{vars: tc.vars}
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			f := newFlags(fs, Env{Getenv: env.Getenv, Unsetenv: env.Unsetenv})
			s.register(f, "HETZNER")
			if err := fs.Parse(tc.args); err != nil || f.err() != nil {
				t.Fatal(err, f.err())
			}
			if rate, flood := s.limits(); rate != tc.rate || flood != tc.flood {
				t.Fatalf("limits = %d, %d; want %d, %d", rate, flood, tc.rate, tc.flood)
			}
		})
	}
}

// TestStdioLocalUserHasNoLimit: call 101 and beyond over stdio succeed.
func TestStdioLocalUserHasNoLimit(t *testing.T) {
	cs, _, _ := session(t, map[string]string{}, "-data-dir", t.TempDir(), "-dns-listen", "off")
	for range 150 {
		call(t, cs, "list_zones", map[string]any{})
	}
}

// TestStdioLimitNamesItsFlag: a limit asked for over stdio refuses with a
// message naming the flag that changes it.
func TestStdioLimitNamesItsFlag(t *testing.T) {
	cs, _, _ := session(t, map[string]string{}, "-data-dir", t.TempDir(), "-dns-listen", "off", "-rate-limit", "2")
	call(t, cs, "list_zones", map[string]any{})
	call(t, cs, "list_zones", map[string]any{})
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_zones", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "--rate-limit") || !strings.Contains(string(we.Data), `"setting":"--rate-limit"`) {
		t.Fatalf("call 3: %v", err)
	}
}

// serveHTTP runs `bulwark dns -http 127.0.0.1:0 args...` and returns its
// MCP URL.
func serveHTTP(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	env := &fakeEnv{vars: map[string]string{}}
	all := append([]string{"dns", "-http", "127.0.0.1:0", "-data-dir", t.TempDir(), "-dns-listen", "off"}, args...)
	go func() {
		done <- Run(ctx, Env{Args: all, Getenv: env.Getenv, Unsetenv: env.Unsetenv, Stdin: nopReader{}, Stdout: nopCloser{&syncBuffer{}}, Stderr: &stderr})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("bulwark dns did not stop")
		}
	})
	for range 500 {
		if _, rest, ok := strings.Cut(stderr.String(), "url="); ok {
			u, _, _ := strings.Cut(rest, "\n")
			return strings.Trim(strings.Fields(u)[0], `"`)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no URL in %s", stderr.String())
	return ""
}

type nopReader struct{}

func (nopReader) Read([]byte) (int, error) { select {} }
func (nopReader) Close() error             { return nil }

func postCall(t *testing.T, url string, i int) (int, string, http.Header) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_zones","arguments":{}}}`, i)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String(), resp.Header
}

// TestLoopbackAgentAtWork: a loopback client making 250 calls in a burst
// (more than paging a 5,000-record zone twice) is refused by neither the
// flood guard nor the per-principal limit.
func TestLoopbackAgentAtWork(t *testing.T) {
	url := serveHTTP(t)
	for i := range 250 {
		if code, body, _ := postCall(t, url, i); code != 200 || strings.Contains(body, "rate_limited") {
			t.Fatalf("call %d: %d %s", i, code, body)
		}
	}
}

// TestHTTPRefusalsNameTheirFlags: the flood guard and the per-principal
// limit each name the flag that changes them.
func TestHTTPRefusalsNameTheirFlags(t *testing.T) {
	for _, tc := range []struct{ flag, setting string }{{"-flood-limit", "--flood-limit"}, {"-rate-limit", "--rate-limit"}} {
		url := serveHTTP(t, tc.flag, "2")
		postCall(t, url, 1)
		postCall(t, url, 2)
		code, body, h := postCall(t, url, 3)
		if code != 429 || h.Get("Retry-After") == "" || !strings.Contains(body, tc.setting+")") || !strings.Contains(body, `"setting":"`+tc.setting+`"`) {
			t.Fatalf("%s 2, call 3: %d %s", tc.flag, code, body)
		}
	}
}
