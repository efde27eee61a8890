package rustpad

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func httpGet(t *testing.T, method, url string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestRoutes(t *testing.T) {
	s := Start(t)
	c := dial(t, s, "a%20b")
	send(t, c, `{"Edit":{"revision":0,"operation":["spaced"]}}`)
	expect(t, c, `{"History":{"start":0,"operations":[{"id":0,"operation":["spaced"]}]}}`)
	tests := []struct {
		method, path string
		code         int
		ctype, body  string
	}{
		{"GET", "/api/text/a%20b", 200, "text/plain; charset=utf-8", "spaced"},
		{"POST", "/api/text/a%20b", 200, "text/plain; charset=utf-8", "spaced"},
		{"DELETE", "/api/text/nothing", 200, "text/plain; charset=utf-8", ""},
		{"GET", "/api/text/a%2520b", 200, "text/plain; charset=utf-8", ""},
		{"GET", "/api/text/", 404, "", ""},
		{"GET", "/api/text/a/b", 404, "", ""},
		{"GET", "/api/socket/", 404, "", ""},
		{"GET", "/api/unknown", 404, "", ""},
		{"GET", "/api/stats/", 404, "", ""},
	}
	for _, tt := range tests {
		code, ctype, body := httpGet(t, tt.method, s.URL+tt.path)
		if code != tt.code || (tt.code == 200 && (ctype != tt.ctype || body != tt.body)) {
			t.Errorf("%s %s = %d %q %q", tt.method, tt.path, code, ctype, body)
		}
	}
	var stats struct {
		StartTime    int64 `json:"start_time"`
		NumDocuments int   `json:"num_documents"`
		DatabaseSize int   `json:"database_size"`
	}
	code, ctype, body := httpGet(t, "PUT", s.URL+"/api/stats")
	if err := json.Unmarshal([]byte(body), &stats); err != nil || code != 200 || ctype != "application/json" {
		t.Fatalf("stats: %d %q %q %v", code, ctype, body, err)
	}
	if stats.NumDocuments != 1 || stats.StartTime != s.start {
		t.Errorf("stats %+v: /api/text must not create pads", stats)
	}
}

func TestBurst(t *testing.T) {
	s := Start(t)
	a := dial(t, s, "b")
	send(t, a, `{"CursorData":{"cursors":[],"selections":[]}}`)
	// Never edited, no language: the barrier echo is the first frame.
	expect(t, a, `{"UserCursor":{"id":0,"data":{"cursors":[],"selections":[]}}}`)
	if err := a.ws.Write(testCtx(t), websocket.MessageBinary, []byte("ignored")); err != nil {
		t.Fatal(err)
	}
	send(t, a, `{"Edit":{"revision":0,"operation":["x"],"ignored":true}}`)
	expect(t, a, `{"History":{"start":0,"operations":[{"id":0,"operation":["x"]}]}}`)

	if err := s.Restore("r", "saved"); err != nil {
		t.Fatal(err)
	}
	r := dial(t, s, "r")
	if r.ID != 0 {
		t.Fatalf("restored pad identity %d", r.ID)
	}
	expect(t, r, `{"History":{"start":0,"operations":[{"id":18446744073709551615,"operation":["saved"]}]}}`)
	if err := s.Restore("e", ""); err != nil {
		t.Fatal(err)
	}
	expect(t, dial(t, s, "e"), `{"History":{"start":0,"operations":[{"id":18446744073709551615,"operation":[]}]}}`)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A connection that stops reading falls behind the 16-deep broadcast and
// is dropped.
func TestLaggardDropped(t *testing.T) {
	s := Start(t)
	_ = dial(t, s, "lag") // never reads
	b := dial(t, s, "lag")
	ctx := testCtx(t)
	big := strings.Repeat("x", 256<<10)
	go func() {
		for {
			if _, err := b.Read(ctx); err != nil {
				return
			}
		}
	}()
	for i := 0; s.Connections("lag") == 2 && i < 400; i++ {
		if err := b.Send(ctx, fmt.Sprintf(`{"SetLanguage":"%d%s"}`, i, big)); err != nil {
			// On a loaded machine the sender can fall behind its own
			// broadcasts too and be dropped as well; the laggard still is.
			break
		}
	}
	waitFor(t, "the laggard to be dropped", func() bool { return s.Connections("lag") <= 1 })
}

func TestHostileModes(t *testing.T) {
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	s := Start(t)
	s.SetHostile(Hostile{Stall: StallBeforeIdentity})
	if _, err := Connect(short(), s.URL, "h"); err == nil {
		t.Error("StallBeforeIdentity: got an Identity")
	}
	s.SetHostile(Hostile{Stall: StallAfterIdentity})
	c := dial(t, s, "h")
	send(t, c, `{"CursorData":{"cursors":[],"selections":[]}}`)
	if f, err := c.Read(short()); err == nil {
		t.Errorf("StallAfterIdentity: got %s", f)
	}
	s.SetHostile(Hostile{CloseAfterIdentity: true})
	if _, err := dial(t, s, "h").Read(testCtx(t)); err == nil {
		t.Error("CloseAfterIdentity: connection stayed open")
	}
	s.SetHostile(Hostile{GiantFrame: 1 << 20, Users: 300})
	c = dial(t, s, "h")
	if f, _ := c.Read(testCtx(t)); len(f) < 1<<20 {
		t.Errorf("GiantFrame: first frame %d bytes", len(f))
	}
	for i := range 300 {
		if f, _ := c.Read(testCtx(t)); !strings.Contains(f, fmt.Sprintf(`"name":"user-%d"`, i)) {
			t.Fatalf("Users: frame %d is %.80s", i, f)
		}
	}
	for _, m := range Malformations() {
		s.SetHostile(Hostile{Malformed: m})
		expect(t, dial(t, s, "h"), m.Frame())
	}
}

func TestHostileTiming(t *testing.T) {
	s := Start(t)
	w := dial(t, s, "t")
	send(t, w, `{"Edit":{"revision":0,"operation":["old text"]}}`)
	expect(t, w, `{"History":{"start":0,"operations":[{"id":0,"operation":["old text"]}]}}`)

	s.SetHostile(Hostile{BurstDelay: 100 * time.Millisecond})
	start := time.Now()
	c := dial(t, s, "t")
	expect(t, c, `{"History":{"start":0,"operations":[{"id":0,"operation":["old text"]}]}}`)
	if time.Since(start) < 100*time.Millisecond {
		t.Error("BurstDelay: History came early")
	}

	s.SetHostile(Hostile{Flood: 50})
	c = dial(t, s, "t")
	expect(t, c, `{"History":{"start":0,"operations":[{"id":0,"operation":["old text"]}]}}`)
	send(t, c, `{"CursorData":{"cursors":[],"selections":[]}}`)
	expect(t, c, fmt.Sprintf(`{"UserCursor":{"id":%d,"data":{"cursors":[],"selections":[]}}}`, c.ID))
	for i := range 50 {
		expect(t, c, fmt.Sprintf(`{"UserCursor":{"id":1099511627776,"data":{"cursors":[%d],"selections":[]}}}`, i))
	}

	s.SetHostile(Hostile{Chatter: true})
	c = dial(t, s, "t")
	send(t, c, `{"CursorData":{"cursors":[],"selections":[]}}`)
	for range 20 {
		if f, err := c.ReadUntil(testCtx(t), "1099511627776"); err != nil || strings.Contains(f, `"id":3`) {
			t.Fatalf("Chatter: %s %v", f, err)
		}
	}

	s.SetHostile(Hostile{WithholdEcho: true})
	c = dial(t, s, "t")
	s.SetHostile(Hostile{})
	send(t, c, `{"Edit":{"revision":1,"operation":[8,"!"]}}`)
	if _, err := w.ReadUntil(testCtx(t), `"operation":[8,"!"]`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if f, err := c.ReadUntil(ctx, `"start":1`); err == nil {
		t.Errorf("WithholdEcho: got %s", f)
	}
}

func TestSetHostileConcurrent(t *testing.T) {
	s := Start(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s.SetHostile(Hostile{Users: i})
			c, err := Connect(testCtx(t), s.URL, "cc")
			if err == nil {
				c.Close()
			}
		})
	}
	wg.Wait()
}
