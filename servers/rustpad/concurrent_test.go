package rustpad_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/rustpad"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// Another user's edit lands between the tool's read and its write: the
// tool's operation is transformed over it and nothing is lost.
func TestConcurrentEditBetweenReadAndWrite(t *testing.T) {
	cases := []struct {
		name, seed string
		other      func(n int) *ot.Operation // on the seeded text (n code points)
		tool       string
		args       map[string]any
		want       string
	}{
		{"append", "abc", func(n int) *ot.Operation { return ot.New().Insert("X").Retain(n) },
			"append_to_document", map[string]any{"text": "!"}, "Xabc!"},
		{"append at the same end", "abc", func(n int) *ot.Operation { return ot.New().Retain(n).Insert("?") },
			"append_to_document", map[string]any{"text": "!"}, "abc!?"},
		{"replace", "hello world", func(n int) *ot.Operation { return ot.New().Retain(n).Insert(" again") },
			"replace_in_document", map[string]any{"search": "world", "replace": "there"}, "hello there again"},
		{"replace beside a deletion", "one two three", func(n int) *ot.Operation { return ot.New().Delete(4).Retain(n - 4) },
			"replace_in_document", map[string]any{"search": "three", "replace": "3"}, "two 3"},
		{"set keeps an edit in the unchanged part", "keep this; old middle; keep that",
			func(n int) *ot.Operation { return ot.New().Insert("[B]").Retain(n) },
			"set_document", map[string]any{"text": "keep this; NEW; keep that"}, "[B]keep this; NEW; keep that"},
		{"set keeps an insert inside the replaced part", "aaa old bbb",
			func(n int) *ot.Operation { return ot.New().Retain(5).Insert("[B]").Retain(n - 5) },
			"set_document", map[string]any{"text": "aaa new bbb"}, "aaa new[B] bbb"}, // the insert survives at the deletion point
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, setup{})
			seed(t, f, "pad", c.seed)
			n := len([]rune(c.seed))
			rustpad.SetBeforeEdit(f.srv, func(pad string) {
				if err := tryWrite(f, pad, 1, c.other(n)); err != nil {
					t.Error(err)
				}
			})
			args := with(c.args, "id", "pad")
			if c.tool == "set_document" {
				f.confirmed(t, c.tool, args, nil)
			} else {
				f.ok(t, c.tool, args, nil)
			}
			if got := f.peer.Text("pad"); got != c.want {
				t.Fatalf("pad %q, want %q", got, c.want)
			}
		})
	}
}

// A second user types continuously while the tools append: every
// keystroke of both survives exactly once, and the tools read what the
// peer holds.
func TestConcurrentTyping(t *testing.T) {
	f := newFixture(t, setup{})
	u := connectUser(t, f, "busy")
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // keep reading, as a real client must
		defer wg.Done()
		for ctx.Err() == nil {
			if _, err := u.c.Read(ctx); err != nil {
				return
			}
		}
	}()
	const typed, appended = 40, 10
	go func() {
		defer wg.Done()
		for i := range typed {
			// An insert at revision 0 (the empty pad): the peer transforms
			// it over everything since, like a client far behind.
			if err := u.c.SendEdit(ctx, 0, ot.New().Insert(fmt.Sprintf("<u%d>", i))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range appended {
		f.ok(t, "append_to_document", map[string]any{"id": "busy", "text": fmt.Sprintf("[t%d]", i)}, nil)
	}
	waitRevision(t, f, "busy", typed+appended)
	cancel()
	wg.Wait()
	text := f.peer.Text("busy")
	for i := range typed {
		if n := strings.Count(text, fmt.Sprintf("<u%d>", i)); n != 1 {
			t.Fatalf("<u%d> occurs %d times in %q", i, n, text)
		}
	}
	for i := range appended {
		if n := strings.Count(text, fmt.Sprintf("[t%d]", i)); n != 1 {
			t.Fatalf("[t%d] occurs %d times in %q", i, n, text)
		}
	}
	// The tools' appends keep their order: each went at the end of what
	// its call saw.
	last := -1
	for i := range appended {
		at := strings.Index(text, fmt.Sprintf("[t%d]", i))
		if at < last {
			t.Fatalf("append %d landed before append %d: %q", i, i-1, text)
		}
		last = at
	}
	if got := body(t, f.ok(t, "get_document", map[string]any{"id": "busy"}, nil)); got != text {
		t.Fatalf("get_document %q, peer %q", got, text)
	}
}
