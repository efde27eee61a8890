package kernel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// stdioSession is one ServeStdioWith on pipes, read line by line.
type stdioSession struct {
	in    *io.PipeWriter
	lines chan string
	done  chan error // ServeStdioWith's result
	ended bool       // the output closed
}

func startStdio(t testing.TB, srv *kernel.Server, disable bool) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &stdioSession{in: inW, lines: make(chan string, 1024), done: make(chan error, 1)}
	go func() { s.done <- srv.ServeStdioWith(ctx, inR, outW, kernel.StdioOptions{DisableFastPath: disable}) }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close() })
	return s
}

// stdioPair is the same server twice over stdio: fast path on and off.
type stdioPair struct {
	t         testing.TB
	fast, sdk *stdioSession
	seq       int
	wait      time.Duration // how long a step waits for a response it expects
}

func newStdioPair(t testing.TB, limit int) *stdioPair {
	t.Helper()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	return &stdioPair{t: t, wait: 5 * time.Second,
		fast: startStdio(t, fastServer(t, limit, clock), false),
		sdk:  startStdio(t, fastServer(t, limit, clock), true)}
}

const stdioInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// initialize opens the session as a client does; init is the initialize
// request.
func (p *stdioPair) initialize(init string) {
	p.step(init)
	p.step(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// step sends text (one or more lines) to both sessions, then a ping to
// sync on, and requires the same output lines from both, in any order
// (the go-sdk answers concurrently), after normalization.
func (p *stdioPair) step(text string) []string {
	p.t.Helper()
	p.seq++
	sync := fmt.Sprintf(`"sync-%d"`, p.seq)
	want := []string{sync}
	dec := json.NewDecoder(strings.NewReader(text))
	for {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if dec.Decode(&m) != nil {
			break
		}
		if m.Method != nil && len(m.ID) > 0 && string(m.ID) != "null" {
			want = append(want, idString(m.ID))
		}
	}
	msg := text + "\n" + `{"jsonrpc":"2.0","id":` + sync + `,"method":"ping"}` + "\n"
	got := [2][]string{}
	ended := [2]bool{}
	for i, s := range []*stdioSession{p.sdk, p.fast} {
		got[i], ended[i] = s.collect(msg, want, p.wait)
	}
	if ended[0] != ended[1] || !slices.Equal(got[0], got[1]) {
		p.t.Errorf("stdio fast path differs from the go-sdk path after %.300q\nsdk (ended %v):\n  %s\nfast (ended %v):\n  %s",
			text, ended[0], strings.Join(got[0], "\n  "), ended[1], strings.Join(got[1], "\n  "))
	}
	return got[1]
}

// idString is a JSON id in one form for numbers and strings.
func idString(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	if f, ok := v.(float64); ok {
		return fmt.Sprint(int64(f))
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// collect writes msg and reads lines until a response to each id in want
// came, the output closed, or wait passed; it returns the lines read,
// normalized and sorted, without the sync ping's answer.
func (s *stdioSession) collect(msg string, want []string, wait time.Duration) ([]string, bool) {
	if s.ended {
		return nil, true
	}
	go func() { _, _ = io.WriteString(s.in, msg) }()
	pending := map[string]bool{}
	for _, id := range want {
		pending[id] = true
	}
	sync := want[0]
	var out []string
	timeout := time.After(wait)
	for len(pending) > 0 {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.ended = true
				slices.Sort(out)
				return out, true
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method *string         `json:"method"`
			}
			if json.Unmarshal([]byte(l), &m) == nil && m.Method == nil && len(m.ID) > 0 {
				id := idString(m.ID)
				delete(pending, id)
				if id == sync {
					continue
				}
			}
			for _, n := range fastNormal {
				l = n.re.ReplaceAllString(l, n.repl)
			}
			out = append(out, l)
		case <-timeout:
			slices.Sort(out)
			return append(out, "(timed out)"), false
		}
	}
	slices.Sort(out)
	return out, false
}

// stdioLines are the stdio-specific lines of the differential test, beside
// fastTable's bodies.
func stdioLines() []string {
	item := `{"zone":"example.com","name":"www"}`
	return []string{
		call(`500`, `"get_item"`, item, ""),
		call(`501`, `"get_item"`, item, `{"progressToken":"p"}`),
		call(`502`, `"progress_steps"`, item, `{"progressToken":5}`),
		call(`503`, `"change_ttl"`, `{"zone":"z","ttl":300}`, `{"progressToken":"p"}`),
		call(`504`, `"delete_item"`, item, ""),
		call(`505`, `"pro_report"`, item, ""),
		call(`506`, `"get_item"`, item, "") + "\r",
		"  " + call(`507`, `"get_item"`, item, ""),
		call(`508`, `"get_item"`, item, "") + " ",
		call(`509`, `"get_item"`, item, "") + call(`510`, `"get_item"`, item, ""),
		"",
		"   \t",
		`{"jsonrpc":"2.0","id":511,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":512,"method":"ping","params":{"_meta":{"progressToken":"p"}}}`,
		`{"jsonrpc":"2.0","id":513,"method":"tools/call","params":{"name":"get_item","arguments":{"zone":"z","name":"n"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
		`{"jsonrpc":"2.0","id":514,"result":{}}`,
		`{"jsonrpc":"2.0","id":515,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":516,"error":5}`,
		`{"jsonrpc":"2.0","id":517,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":518,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":519,"method":"no/such"}`,
		`{"jsonrpc":"2.0","id":520,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":521,"method":"tools/call","params":{}}`,
		`{"jsonrpc":"2.0","id":522,"method":"tools/call","params":{"name":"get_item","arguments":{"zone":"z","name":"n"},"Name":"x"}}`,
		`{"jsonrpc":"2.0","id":523,"method":"tools/call","params":{"name":"get_item","arguments":{"zone":"z","name":"n"}},"Method":"ping"}`,
		`{"jsonrpc":"2.0","ID":524,"id":525,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":526,"method":"ping","jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":"527","method":"ping"}`,
		`[{"jsonrpc":"2.0","id":528,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":529,"method":"ping"`,
		`not json`,
		"{\"jsonrpc\":\"2.0\",\n\"id\":530,\"method\":\"ping\"}",
		`{"jsonrpc":"2.0","id":531,"method":"logging/setLevel","params":{"level":"debug"}}`,
		call(`532`, `"change_ttl"`, `{"zone":"z","ttl":300}`, `{"progressToken":"p"}`),
		call(`533`, `"get_item"`, item, ""),
	}
}

// TestStdioFastPathEquivalence sends every line of the HTTP table, the
// stdio lines and every golden transcript's requests (as sent, and
// without their 2026-07-28 _meta) through ServeStdio with the fast path
// on and off, in order, and requires the same output. A line that ends a
// session (the go-sdk stops at a value it cannot read) starts a new pair.
func TestStdioFastPathEquivalence(t *testing.T) {
	var texts []string
	for _, q := range fastTable() {
		texts = append(texts, q.body)
	}
	texts = append(texts, stdioLines()...)
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	for _, file := range files {
		for _, body := range transcriptRequests(t, file) {
			texts = append(texts, body, legacyBody(t, body))
		}
	}
	var p *stdioPair
	fastAnswered := 0
	for _, text := range texts {
		// A line the fast path cannot vouch for hands the rest of the
		// session to the go-sdk: it gets a pair of its own.
		alone := strings.Contains(text, "\n") || !strings.HasPrefix(text, "{") || !strings.HasSuffix(text, "}")
		if p == nil || p.fast.ended || p.sdk.ended || alone {
			p = newStdioPair(t, 1000)
			p.wait = 2 * time.Second
			p.initialize(stdioInit)
		}
		for _, l := range p.step(text) {
			if strings.Contains(l, `"result"`) {
				fastAnswered++
			}
		}
		if alone {
			p = nil
		}
	}
	if fastAnswered < 60 {
		t.Fatalf("only %d results: the table no longer exercises the stdio fast path", fastAnswered)
	}
}

// legacyBody is a request without the 2026-07-28 members of its _meta.
func legacyBody(t testing.TB, body string) string {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil {
		return body
	}
	if params, ok := m["params"].(map[string]any); ok {
		if meta, ok := params["_meta"].(map[string]any); ok {
			for k := range meta {
				if strings.HasPrefix(k, "io.modelcontextprotocol/") {
					delete(meta, k)
				}
			}
			if len(meta) == 0 {
				delete(params, "_meta")
			}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
