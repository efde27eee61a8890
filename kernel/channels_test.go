package kernel_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// checkHostileFree fails when text still holds a secret, a live envelope
// tag inside the data, or an invisible character.
func checkHostileFree(t *testing.T, channel, text string) {
	t.Helper()
	for _, secret := range []string{"hunter2", "c2VjcmV0LXRzaWc=", "s3cr3t"} {
		if strings.Contains(text, secret) {
			t.Errorf("%s: secret %q reached the client: %s", channel, secret, text)
		}
	}
	for _, r := range []string{"\u202e", "\u200b"} {
		if strings.Contains(text, r) {
			t.Errorf("%s: invisible %U reached the client", channel, []rune(r)[0])
		}
	}
	// The only closing tag is the envelope's own, once, on its own line.
	if n := strings.Count(text, "</untrusted-data>"); n > 1 {
		t.Errorf("%s: the data closed the envelope (%d closing tags): %s", channel, n, text)
	}
}

// TestEveryChannelIsSanitized lists every channel that can carry upstream
// text and feeds each a hostile sample: an injected instruction with a
// closing envelope tag, invisible characters, a secret-looking key, a long
// value.
func TestEveryChannelIsSanitized(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	var notes struct {
		sync.Mutex
		logs     []string
		progress []string
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params)
			notes.Lock()
			notes.logs = append(notes.logs, string(b))
			notes.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			notes.Lock()
			notes.progress = append(notes.progress, r.Params.Message)
			notes.Unlock()
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := f.srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call := func(name string, args any) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{"progressToken": "p1", mcp.MetaKeyLogLevel: "debug"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	structured := func(res *mcp.CallToolResult) string { b, _ := json.Marshal(res.StructuredContent); return string(b) }

	channels := []struct {
		name string
		get  func() string
	}{
		{"text content (JSON)", func() string { return mcptest.Text(call("get_item", map[string]any{"zone": "z", "name": "n"})) }},
		{"structured content", func() string { return structured(call("get_item", map[string]any{"zone": "z", "name": "n"})) }},
		{"text content (plain text)", func() string { return mcptest.Text(call("export_item", map[string]any{"zone": "z", "name": "n"})) }},
		{"error result", func() string {
			return mcptest.Text(call("refused_upstream", map[string]any{"zone": "z", "name": "n"}))
		}},
		{"error structured content", func() string {
			return structured(call("refused_upstream", map[string]any{"zone": "z", "name": "n"}))
		}},
		{"log notification", func() string {
			call("change_ttl", map[string]any{"zone": "z", "ttl": 300})
			for i := 0; i < 200; i++ { // notifications are delivered asynchronously
				notes.Lock()
				n := len(notes.logs) + len(notes.progress)
				notes.Unlock()
				if n >= 2 {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			notes.Lock()
			defer notes.Unlock()
			return strings.Join(notes.logs, "\n")
		}},
		{"progress notification", func() string {
			notes.Lock()
			defer notes.Unlock()
			return strings.Join(notes.progress, "\n")
		}},
	}
	for _, ch := range channels {
		t.Run(ch.name, func(t *testing.T) {
			text := ch.get()
			if text == "" || text == "null" {
				t.Fatal("channel carried nothing")
			}
			checkHostileFree(t, ch.name, text)
		})
	}
	// The long value is cut with its length on both channels.
	res := call("list_items", map[string]any{"count": 1})
	if !strings.Contains(mcptest.Text(res), "10000 characters in all") || !strings.Contains(structured(res), "10000 characters in all") {
		t.Error("a 10,000-character value was not cut with its length")
	}
	// The injected text is still there to report, inside the envelope.
	text := mcptest.Text(call("get_item", map[string]any{"zone": "z", "name": "n"}))
	if !strings.HasPrefix(text, `<untrusted-data source="test-api">`) || !strings.Contains(text, "ignore previous instructions") {
		t.Fatalf("envelope: %s", text)
	}
}

func TestStructuralTruncation(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	res := f.sess.Call(t, "list_items", map[string]any{"count": 3000})
	text := mcptest.Text(res)
	if len(text) > 201_000 {
		t.Fatalf("result %d bytes", len(text))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !json.Valid(raw) || !strings.Contains(string(raw), "more item(s) left out") {
		t.Fatalf("structured content not cut structurally: %.200s", raw)
	}
	if !strings.Contains(text, "item(s) were left out") {
		t.Fatal("no note about truncation")
	}
}
