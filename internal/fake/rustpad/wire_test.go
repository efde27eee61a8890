package rustpad

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, s *Server, padID string) *Client {
	t.Helper()
	c, err := Connect(testCtx(t), s.URL, padID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func send(t *testing.T, c *Client, frame string) {
	t.Helper()
	if err := c.Send(testCtx(t), frame); err != nil {
		t.Fatalf("send %s: %v", frame, err)
	}
}

func expect(t *testing.T, c *Client, want string) {
	t.Helper()
	got, err := c.Read(testCtx(t))
	if err != nil {
		t.Fatalf("reading, want %s: %v", want, err)
	}
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// expectDrop reads until the server ends the connection.
// The deadline is generous: under -race on a loaded two-core machine, decoding
// a 500 KB edit before the drop took over two seconds.
func expectDrop(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if _, err := c.Read(ctx); err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatal("connection was not dropped")
			}
			return
		}
	}
}

// Reference §11.1 vectors 1–3.
func TestWireEditsAndTransform(t *testing.T) {
	s := Start(t)
	a := dial(t, s, "pad")
	if a.ID != 0 {
		t.Fatalf("first identity %d, want 0", a.ID)
	}
	send(t, a, `{"Edit":{"revision":0,"operation":["hello"]}}`)
	expect(t, a, `{"History":{"start":0,"operations":[{"id":0,"operation":["hello"]}]}}`)
	if got := s.Text("pad"); got != "hello" {
		t.Fatalf("text %q", got)
	}
	send(t, a, `{"Edit":{"revision":1,"operation":[2,-1,"n",2]}}`)
	expect(t, a, `{"History":{"start":1,"operations":[{"id":0,"operation":[2,"n",-1,2]}]}}`)

	b := dial(t, s, "pad")
	if b.ID != 1 {
		t.Fatalf("second identity %d, want 1", b.ID)
	}
	send(t, b, `{"Edit":{"revision":0,"operation":["~rust~"]}}`)
	expect(t, b, `{"History":{"start":0,"operations":[{"id":0,"operation":["hello"]},{"id":0,"operation":[2,"n",-1,2]}]}}`)
	want := `{"History":{"start":2,"operations":[{"id":1,"operation":["~rust~",5]}]}}`
	expect(t, b, want)
	expect(t, a, want)
	if text, rev := s.State("pad"); text != "~rust~henlo" || rev != 3 {
		t.Fatalf("state %q %d", text, rev)
	}
}

// Reference §11.1 vectors 4 and 5.
func TestWireLanguageAndUsers(t *testing.T) {
	s := Start(t)
	a := dial(t, s, "p")
	send(t, a, `{"SetLanguage":"javascript"}`)
	expect(t, a, `{"Language":"javascript"}`)
	send(t, a, `{"ClientInfo":{"name":"Alice","hue":42}}`)
	expect(t, a, `{"UserInfo":{"id":0,"info":{"name":"Alice","hue":42}}}`)
	b := dial(t, s, "p")
	expect(t, b, `{"Language":"javascript"}`)
	expect(t, b, `{"UserInfo":{"id":0,"info":{"name":"Alice","hue":42}}}`)
	send(t, b, `{"ClientInfo":{"name":"Bob","hue":96,"extra":[1]}}`)
	for _, c := range []*Client{a, b} {
		expect(t, c, `{"UserInfo":{"id":1,"info":{"name":"Bob","hue":96}}}`)
	}
	send(t, a, `{"SetLanguage":"python"}`)
	for _, c := range []*Client{a, b} {
		expect(t, c, `{"Language":"python"}`)
	}
	b.Close()
	expect(t, a, `{"UserInfo":{"id":1,"info":null}}`)
	if s.Text("p") != "" {
		t.Fatal("metadata changed the text")
	}
}

// Reference §11.1 vector 6 and the strict decoding of §3/§10.
func TestWireDrops(t *testing.T) {
	bad := []string{
		`{"ClientInfo":{"name":"x"}}`, `{"Invalid":"please close"}`, `{"Edit":{"revision":1,"operation":[]}}`,
		`not json`, `{"SetLanguage":null}`, `{"SetLanguage":1}`, `{"ClientInfo":{"name":"x","hue":-1}}`,
		`{"ClientInfo":{"name":"x","hue":1.0}}`, `{"ClientInfo":{"name":"x","hue":4294967296}}`,
		`{"CursorData":{"cursors":null,"selections":[]}}`, `{"CursorData":{"cursors":[],"selections":[[1]]}}`,
		`{"CursorData":{"cursors":[-0],"selections":[]}}`, `{"Edit":{"revision":0,"operation":null}}`,
		`{"Edit":{"revision":0,"operation":[-0]}}`, `{"Edit":{"revision":0,"operation":[1e0]}}`,
		`{"Edit":{"revision":0,"revision":0,"operation":[]}}`, `{"SetLanguage":"a","SetLanguage":"b"}`,
		`{"SetLanguage":"a","ClientInfo":{"name":"x","hue":1}}`, `{"SetLanguage":"\ud800"}`,
		`{"Edit":{"revision":0,"operation":[1]}}`, `{}`, `[]`, `{"SetLanguage":"a"} {}`,
	}
	s := Start(t)
	watcher := dial(t, s, "drops")
	for i, frame := range bad {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			c := dial(t, s, "drops")
			send(t, c, frame)
			expectDrop(t, c)
			expect(t, watcher, fmt.Sprintf(`{"UserInfo":{"id":%d,"info":null}}`, c.ID))
		})
	}
	late := dial(t, s, "drops")
	send(t, late, `{"CursorData":{"cursors":[],"selections":[]}}`)
	expect(t, late, fmt.Sprintf(`{"UserCursor":{"id":%d,"data":{"cursors":[],"selections":[]}}}`, late.ID))
}

func TestWireDocumentCap(t *testing.T) {
	s := Start(t)
	c := dial(t, s, "big")
	ctx := testCtx(t)
	if err := c.SendEdit(ctx, 0, ot.New().Insert(strings.Repeat("a", 5000))); err != nil {
		t.Fatal(err)
	}
	expect(t, c, `{"History":{"start":0,"operations":[{"id":0,"operation":["`+strings.Repeat("a", 5000)+`"]}]}}`)
	if err := c.SendEdit(ctx, 1, ot.New().Insert(strings.Repeat("b", 500_000)).Retain(5000)); err != nil {
		t.Fatal(err)
	}
	expectDrop(t, c)
	d := dial(t, s, "big")
	if err := d.SendEdit(ctx, 1, ot.New().Retain(5000).Insert(strings.Repeat("y", MaxDocument-5000))); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadUntil(testCtx(t), `"start":1`); err != nil {
		t.Fatalf("an edit to exactly the cap was refused: %v", err)
	}
}

// Reference §11.1 vector 7.
func TestWireUnicode(t *testing.T) {
	s := Start(t)
	c := dial(t, s, "u")
	send(t, c, `{"Edit":{"revision":0,"operation":["h🎉e🎉l👨‍👨‍👦‍👦lo"]}}`)
	send(t, c, `{"Edit":{"revision":1,"operation":[-14]}}`)
	expect(t, c, `{"History":{"start":0,"operations":[{"id":0,"operation":["h🎉e🎉l👨‍👨‍👦‍👦lo"]}]}}`)
	expect(t, c, `{"History":{"start":1,"operations":[{"id":0,"operation":[-14]}]}}`)
	send(t, c, `{"Edit":{"revision":2,"operation":["🎉😍𒀇👨‍👨‍👦‍👦"]}}`)
	send(t, c, `{"Edit":{"revision":3,"operation":["👯‍♂️",3,"𐅣𐅤𐅥",7]}}`)
	send(t, c, `{"Edit":{"revision":3,"operation":[2,"\u0301\u0302",8]}}`)
	expect(t, c, `{"History":{"start":2,"operations":[{"id":0,"operation":["🎉😍𒀇👨‍👨‍👦‍👦"]}]}}`)
	expect(t, c, `{"History":{"start":3,"operations":[{"id":0,"operation":["👯‍♂️",3,"𐅣𐅤𐅥",7]}]}}`)
	expect(t, c, "{\"History\":{\"start\":4,\"operations\":[{\"id\":0,\"operation\":[6,\"\u0301\u0302\",11]}]}}")
}

// Reference §11.1 vector 8.
func TestWireCursors(t *testing.T) {
	s := Start(t)
	a := dial(t, s, "c")
	send(t, a, `{"Edit":{"revision":0,"operation":["🎉🎉🎉"]}}`)
	expect(t, a, `{"History":{"start":0,"operations":[{"id":0,"operation":["🎉🎉🎉"]}]}}`)
	send(t, a, `{"CursorData":{"cursors":[0,1,2,3],"selections":[[0,1],[2,3]]}}`)
	expect(t, a, `{"UserCursor":{"id":0,"data":{"cursors":[0,1,2,3],"selections":[[0,1],[2,3]]}}}`)
	b := dial(t, s, "c")
	send(t, b, `{"Edit":{"revision":0,"operation":["🎉"]}}`)
	if _, err := b.ReadUntil(testCtx(t), `"start":1`); err != nil {
		t.Fatal(err)
	}
	n := dial(t, s, "c")
	if _, err := n.ReadUntil(testCtx(t), `{"UserCursor":{"id":0,"data":{"cursors":[1,2,3,4],"selections":[[1,2],[3,4]]}}}`); err != nil {
		t.Fatal(err)
	}
}

// Reference §11.1 vector 9 (without the timing assertion).
func TestWirePipelining(t *testing.T) {
	s := Start(t)
	a, b := dial(t, s, "pipe"), dial(t, s, "pipe")
	ctx := testCtx(t)
	rev, length := 0, 0
	for round := range 100 {
		for k := range 1 + round%5 {
			if err := a.SendEdit(ctx, rev, ot.New().Retain(length).Insert(fmt.Sprint(k))); err != nil {
				t.Fatal(err)
			}
			rev, length = rev+1, length+1
		}
	}
	for _, c := range []*Client{a, b} {
		seen := 0
		for seen < rev {
			f, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen += strings.Count(f, `"id":0`)
		}
	}
	if text, r := s.State("pipe"); r != rev || len(text) != length {
		t.Fatalf("revision %d length %d, want %d %d", r, len(text), rev, length)
	}
}
