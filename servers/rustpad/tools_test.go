package rustpad_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

type writeResult struct {
	ID               string `json:"id"`
	URL              string `json:"url"`
	LengthCharacters int    `json:"length_characters"`
	Revision         int    `json:"revision"`
	Language         string `json:"language"`
	Replacements     int    `json:"replacements"`
	Note             string `json:"note"`
}

type infoResult struct {
	ID               string   `json:"id"`
	URL              string   `json:"url"`
	LengthCharacters int      `json:"length_characters"`
	Revision         int      `json:"revision"`
	Language         string   `json:"language"`
	ActiveUsers      []string `json:"active_users"`
	Note             string   `json:"note"`
}

// body is the data inside a text result's envelope.
func body(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "<untrusted-data source=\"rustpad\">\n")
	data, _, ok2 := strings.Cut(rest, "</untrusted-data>")
	if !ok || !ok2 {
		t.Fatalf("not enveloped: %.300s", text)
	}
	return strings.TrimSuffix(data, "\n")
}

func TestGetDocument(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "notes", "h🎉llo\nworld")
	res := f.call(t, "get_document", map[string]any{"id": "notes"})
	if res.IsError || body(t, mcptest.Text(res)) != "h🎉llo\nworld" {
		t.Fatalf("get_document: %s", mcptest.Text(res))
	}
	if f.peer.Connections("notes") != 0 {
		t.Fatal("get_document left a connection")
	}
	// Unknown and empty pads look alike; reading creates nothing.
	var empty struct {
		LengthCharacters int    `json:"length_characters"`
		Note             string `json:"note"`
	}
	f.ok(t, "get_document", map[string]any{"id": "never"}, &empty)
	if empty.LengthCharacters != 0 || !strings.Contains(empty.Note, "never existed") {
		t.Fatalf("empty: %+v", empty)
	}
	if text, rev := f.peer.State("never"); text != "" || rev != 0 {
		t.Fatal("get_document created a pad")
	}
}

func TestGetDocumentInfo(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "info", "👨‍👨‍👦‍👦 family") // 7 + 7 code points
	bob := connectUser(t, f, "info")
	ctx := ctxT(t)
	if err := bob.c.Send(ctx, `{"ClientInfo":{"name":"Bob","hue":96}}`); err != nil {
		t.Fatal(err)
	}
	if err := bob.c.Send(ctx, `{"SetLanguage":"rust"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.c.ReadUntil(ctx, `"Language"`); err != nil {
		t.Fatal(err)
	}
	var info infoResult
	f.ok(t, "get_document_info", map[string]any{"id": "info"}, &info)
	if info.LengthCharacters != 14 || info.Revision != 1 || info.Language != "rust" ||
		len(info.ActiveUsers) != 1 || info.ActiveUsers[0] != "Bob" || info.URL != f.url+"/#info" {
		t.Fatalf("info %+v", info)
	}
	f.ok(t, "get_document_info", map[string]any{"id": "fresh"}, &info)
	if info.LengthCharacters != 0 || info.Language != "plaintext (default)" || len(info.ActiveUsers) != 0 {
		t.Fatalf("fresh pad %+v", info)
	}
}

func TestGetStats(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "a", "x")
	var st struct {
		StartTime    uint64 `json:"start_time"`
		StartTimeISO string `json:"start_time_iso"`
		NumDocuments uint64 `json:"num_documents"`
		DatabaseSize uint64 `json:"database_size"`
	}
	f.ok(t, "get_stats", nil, &st)
	if st.StartTime == 0 || !strings.HasSuffix(st.StartTimeISO, "Z") || st.NumDocuments != 1 || st.DatabaseSize != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCreateDocument(t *testing.T) {
	f := newFixture(t, setup{})
	var res writeResult
	f.ok(t, "create_document", map[string]any{"id": "new", "text": "hello", "language": "Markdown"}, &res)
	if res.ID != "new" || res.URL != f.url+"/#new" || res.LengthCharacters != 5 || res.Language != "markdown" {
		t.Fatalf("create: %+v", res)
	}
	if f.peer.Text("new") != "hello" {
		t.Fatalf("pad holds %q", f.peer.Text("new"))
	}
	var info infoResult
	f.ok(t, "get_document_info", map[string]any{"id": "new"}, &info)
	if info.Language != "markdown" {
		t.Fatalf("language %q", info.Language)
	}
	text := f.fails(t, "create_document", map[string]any{"id": "new", "text": "again"}, kernel.AlreadyExists)
	contains(t, text, `Pad "new" already holds 5 character(s)`)
	if f.peer.Text("new") != "hello" {
		t.Fatal("create_document wrote to a pad that was not empty")
	}
	// Without an id: a random one of 12 characters [a-z0-9].
	f.ok(t, "create_document", map[string]any{}, &res)
	if len(res.ID) != 12 || strings.Trim(res.ID, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		t.Fatalf("random id %q", res.ID)
	}
}

// A pad whose text was deleted is empty, though it has a history.
func TestCreateOnEmptiedPad(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "emptied", "abc")
	write(t, f, "emptied", 1, ot.New().Delete(3))
	f.ok(t, "create_document", map[string]any{"id": "emptied", "text": "fresh"}, nil)
	if got := f.peer.Text("emptied"); got != "fresh" {
		t.Fatalf("pad holds %q", got)
	}
}

func TestAppendToDocument(t *testing.T) {
	f := newFixture(t, setup{})
	if err := f.peer.Restore("app", "line 1"); err != nil {
		t.Fatal(err)
	}
	var res writeResult
	f.ok(t, "append_to_document", map[string]any{"id": "app", "text": "\nline 2 🎉"}, &res)
	if got := f.peer.Text("app"); got != "line 1\nline 2 🎉" || res.LengthCharacters != 15 || res.Revision != 2 {
		t.Fatalf("pad %q, result %+v", got, res)
	}
	// On an empty pad the text is the whole pad.
	f.ok(t, "append_to_document", map[string]any{"id": "blank", "text": "first"}, nil)
	if got := f.peer.Text("blank"); got != "first" {
		t.Fatalf("pad %q", got)
	}
	f.fails(t, "append_to_document", map[string]any{"id": "app", "text": ""}, kernel.InvalidArgument)
}

func TestReplaceInDocument(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "rep", "🎉 one two one 🎉")
	var res writeResult
	text := f.fails(t, "replace_in_document", map[string]any{"id": "rep", "search": "one", "replace": "1"}, kernel.FailedPrecondition)
	contains(t, text, "occurs 2 times")
	f.ok(t, "replace_in_document", map[string]any{"id": "rep", "search": "two", "replace": "2️⃣"}, &res)
	if got := f.peer.Text("rep"); got != "🎉 one 2️⃣ one 🎉" || res.Replacements != 1 {
		t.Fatalf("pad %q, %+v", got, res)
	}
	f.ok(t, "replace_in_document", map[string]any{"id": "rep", "search": "one", "replace": "", "replace_all": true}, &res)
	if got := f.peer.Text("rep"); got != "🎉  2️⃣  🎉" || res.Replacements != 2 {
		t.Fatalf("pad %q, %+v", got, res)
	}
	f.fails(t, "replace_in_document", map[string]any{"id": "rep", "search": "absent", "replace": "x"}, kernel.NotFound)
	f.fails(t, "replace_in_document", map[string]any{"id": "rep", "search": "x", "replace": "x"}, kernel.InvalidArgument)
	f.fails(t, "replace_in_document", map[string]any{"id": "rep", "search": "", "replace": "x"}, kernel.InvalidArgument)
}

func TestSetLanguage(t *testing.T) {
	f := newFixture(t, setup{})
	var res writeResult
	f.ok(t, "set_language", map[string]any{"id": "lang", "language": "C++"}, &res)
	if res.Language != "c++" {
		t.Fatalf("%+v", res)
	}
	var info infoResult
	f.ok(t, "get_document_info", map[string]any{"id": "lang"}, &info)
	if info.Language != "c++" {
		t.Fatalf("language %q", info.Language)
	}
	for _, bad := range []string{"", "rust lang", strings.Repeat("a", 51), "<script>"} {
		f.fails(t, "set_language", map[string]any{"id": "lang", "language": bad}, kernel.InvalidArgument)
	}
}

// Pad ids are checked before any URL is built.
func TestInvalidPadIDs(t *testing.T) {
	f := newFixture(t, setup{})
	for _, id := range []string{"", ".", "..", "a/b", "a b", "a%20b", "é", strings.Repeat("a", 101), "../api/stats"} {
		for _, tool := range []string{"get_document", "get_document_info", "append_to_document"} {
			f.fails(t, tool, map[string]any{"id": id, "text": "x"}, kernel.InvalidArgument)
		}
	}
	if n := f.peer.Connections(".."); n != 0 {
		t.Fatal("a connection was opened")
	}
}

// Write tools report progress: connected, sending, acknowledged.
func TestWriteProgress(t *testing.T) {
	f := newFixture(t, setup{})
	p := &mcp.CallToolParams{Name: "append_to_document", Arguments: map[string]any{"id": "prog", "text": "x"}}
	p.SetProgressToken("progress-1")
	res, err := f.sess.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
	got := f.sess.Progress(3)
	if len(got) != 3 || got[0].Progress != 1 || got[2].Progress != 3 || got[2].Total != 3 {
		t.Fatalf("progress %+v", got)
	}
	contains(t, got[0].Message, "connected")
}

// A full pad is longer than a result may be: it is cut with a notice.
func TestGetDocumentLongPadIsCut(t *testing.T) {
	f := newFixture(t, setup{})
	if err := f.peer.Restore("full", strings.Repeat("line of text\n", 20000)); err != nil {
		t.Fatal(err)
	}
	text := f.ok(t, "get_document", map[string]any{"id": "full"}, nil)
	contains(t, text, "[truncated: ", " of 260000 characters shown]", "The result was cut to stay under 200000 characters")
	if len(text) > 201_000 {
		t.Fatalf("result of %d bytes", len(text))
	}
}
