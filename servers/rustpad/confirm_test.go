package rustpad_test

import (
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/rustpad"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// marker is planted in pad text, user names and the language; no refusal
// may quote it.
const marker = "MARKER-7f3a"

// markedPad seeds a pad with the marker in its text, a user name and the
// language, and returns the user (who stays connected).
func markedPad(t *testing.T, f *fixture, pad string) *user {
	t.Helper()
	seed(t, f, pad, "secret plans "+marker+" 🎉")
	u := connectUser(t, f, pad)
	ctx := ctxT(t)
	if err := u.c.Send(ctx, `{"ClientInfo":{"name":"`+marker+`","hue":1}}`); err != nil {
		t.Fatal(err)
	}
	if err := u.c.Send(ctx, `{"SetLanguage":"`+marker+`"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := u.c.ReadUntil(ctx, `"Language"`); err != nil {
		t.Fatal(err)
	}
	return u
}

// The flow of the security page: refused with a token and a counts-only
// summary; a token for another text refused; done with the token; the
// replay refused.
func TestSetDocumentConfirmation(t *testing.T) {
	f := newFixture(t, setup{})
	markedPad(t, f, "doc")
	args := map[string]any{"id": "doc", "text": "new text"}

	first := f.call(t, "set_document", args)
	tok := token(t, first)
	text := mcptest.Text(first)
	contains(t, text, `Refusing to replace the whole text of pad "doc" without confirmation.`,
		`Pad "doc" currently holds 26 character(s); the call replaces them with the 8 character(s) given`)
	lacks(t, text, marker, "secret", "🎉", "untrusted-data")
	if got := f.peer.Text("doc"); !strings.HasPrefix(got, "secret plans") {
		t.Fatal("acted without confirmation")
	}

	other := f.call(t, "set_document", with(args, "text", "other text", "confirmToken", tok))
	if token(t, other) == tok {
		t.Fatal("the refusal of another text reissued the same token")
	}
	contains(t, mcptest.Text(other), "does not confirm this exact call")
	if got := f.peer.Text("doc"); !strings.HasPrefix(got, "secret plans") {
		t.Fatal("a token for one text wrote another")
	}

	var res writeResult
	f.ok(t, "set_document", with(args, "confirmToken", tok), &res)
	if got := f.peer.Text("doc"); got != "new text" || res.LengthCharacters != 8 {
		t.Fatalf("pad %q, %+v", got, res)
	}

	replay := f.call(t, "set_document", with(args, "text", "third", "confirmToken", tok))
	token(t, replay)
	replay = f.call(t, "set_document", with(args, "confirmToken", tok))
	token(t, replay)
	if got := f.peer.Text("doc"); got != "new text" {
		t.Fatalf("a replay wrote: %q", got)
	}
}

// The token is bound to the text being replaced: once the pad changes,
// it no longer confirms.
func TestSetDocumentTokenBoundToOldText(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "doc", "version 1")
	args := map[string]any{"id": "doc", "text": "replacement"}
	tok := token(t, f.call(t, "set_document", args))
	write(t, f, "doc", 1, ot.New().Retain(9).Insert(" and a late line"))
	res := f.call(t, "set_document", with(args, "confirmToken", tok))
	token(t, res)
	contains(t, mcptest.Text(res), "currently holds 25 character(s)")
	if got := f.peer.Text("doc"); got != "version 1 and a late line" {
		t.Fatalf("pad %q", got)
	}
}

// A change between the check of the token and the write fails closed.
func TestSetDocumentChangedAfterPreview(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "doc", "version 1")
	args := map[string]any{"id": "doc", "text": "replacement"}
	tok := token(t, f.call(t, "set_document", args))
	rustpad.SetAfterPreview(f.srv, func(pad string) {
		rustpad.SetAfterPreview(f.srv, nil)
		if err := tryWrite(f, pad, 1, ot.New().Insert(">> ").Retain(9)); err != nil {
			t.Error(err)
		}
	})
	text := f.fails(t, "set_document", with(args, "confirmToken", tok), kernel.Conflict)
	contains(t, text, `Pad "doc" changed after the confirmation was checked (it held 9 character(s) then, 12 now); nothing was written.`)
	if got := f.peer.Text("doc"); got != ">> version 1" {
		t.Fatalf("pad %q", got)
	}
}

// An empty pad has nothing to lose: set_document writes it without a token.
// A pad whose history has not arrived yet is not empty (see
// TestLateHistoryIsNotAnEmptyPad), so this never skips a real confirmation.
func TestSetDocumentOnEmptyPad(t *testing.T) {
	f := newFixture(t, setup{})
	f.ok(t, "set_document", map[string]any{"id": "blank", "text": "hello"}, nil)
	if got := f.peer.Text("blank"); got != "hello" {
		t.Fatalf("pad %q", got)
	}
	// Now that it holds text, the next set_document asks.
	first := f.call(t, "set_document", map[string]any{"id": "blank", "text": "bye"})
	contains(t, mcptest.Text(first), `Pad "blank" currently holds 5 character(s)`)
	token(t, first)
}

func TestSetDocumentSameText(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "same", "unchanged")
	first := f.call(t, "set_document", map[string]any{"id": "same", "text": "unchanged"})
	contains(t, mcptest.Text(first), "already holds exactly this text")
	var res writeResult
	f.ok(t, "set_document", map[string]any{"id": "same", "text": "unchanged", "confirmToken": token(t, first)}, &res)
	if _, rev := f.peer.State("same"); rev != 1 || !strings.Contains(res.Note, "nothing was sent") {
		t.Fatalf("revision %d, %+v", rev, res)
	}
}

// Clearing a pad is a set_document to "".
func TestSetDocumentClears(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "clear", "some text")
	f.confirmed(t, "set_document", map[string]any{"id": "clear", "text": ""}, nil)
	if got := f.peer.Text("clear"); got != "" {
		t.Fatalf("pad %q", got)
	}
}
