package rustpad_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/rustpad"
)

// policyTable is the expected policy of every tool: reads read-only;
// set_document (overwrites everything), replace_in_document (removes the
// searched text) and set_language (overwrites the language) destructive;
// only set_document gated, bound to its text (the security page).
var policyTable = map[string]mcptest.Policy{
	"get_document":        {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"get_document_info":   {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"get_stats":           {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: true, Gate: "never"},
	"create_document":     {ReadOnly: false, Destructive: false, Idempotent: false, OpenWorld: true, Gate: "never"},
	"set_document":        {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "when the pad holds text; bound to `text`"},
	"append_to_document":  {ReadOnly: false, Destructive: false, Idempotent: false, OpenWorld: true, Gate: "never"},
	"replace_in_document": {ReadOnly: false, Destructive: true, Idempotent: false, OpenWorld: true, Gate: "never"},
	"set_language":        {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: true, Gate: "never"},
}

func declared(t *testing.T) []kernel.Tool {
	t.Helper()
	srv, err := rustpad.New(rustpad.Config{URL: "http://127.0.0.1:3030"}, rustpad.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return srv.Tools()
}

func TestPolicies(t *testing.T) {
	mcptest.CheckPolicies(t, declared(t), policyTable)
}

func listTools(t *testing.T, f *fixture) []*mcp.Tool { return mcptest.Tools(t, f.sess) }

func toolNames(t *testing.T, f *fixture) []string { return mcptest.ToolNames(t, f.sess) }

func TestAnnotationsAllStated(t *testing.T) {
	f := newFixture(t, setup{})
	mcptest.CheckAnnotations(t, f.sess, policyTable)
	for _, tool := range listTools(t, f) {
		props := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		if _, has := props["confirmToken"]; has != (tool.Name == "set_document") {
			t.Errorf("%s: confirmToken advertised %v", tool.Name, has)
		}
	}
}

// Read-only mode does not register the write tools at all.
func TestReadOnlyMode(t *testing.T) {
	f := newFixture(t, setup{kopts: kernel.Options{ReadOnly: true}})
	if got := strings.Join(toolNames(t, f), ","); got != "get_document,get_document_info,get_stats" {
		t.Fatalf("read-only tools %s", got)
	}
	for _, tool := range []string{"set_document", "append_to_document", "create_document"} {
		_, err := f.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"id": "x", "text": "y"}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || !strings.Contains(we.Message, "unknown tool") {
			t.Fatalf("%s in read-only mode: %v", tool, err)
		}
	}
	if _, rev := f.peer.State("x"); rev != 0 {
		t.Fatal("a write happened")
	}
}

func TestAllowAndDenyLists(t *testing.T) {
	f := newFixture(t, setup{kopts: kernel.Options{
		Allow: []string{"get_*", "append_to_document", "set_document"},
		Deny:  []string{"get_stats"},
	}})
	want := []string{"append_to_document", "get_document", "get_document_info", "set_document"}
	if got := toolNames(t, f); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	if _, err := f.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_stats"}); err == nil {
		t.Fatal("a denied tool answered")
	}
	if _, err := kernel.New(kernel.Info{Name: "x"}, declared(t), &kernel.Options{ReadOnly: true, Allow: []string{"set_document"}}); err == nil {
		t.Fatal("an allowed write tool in read-only mode was accepted")
	}
	if _, err := kernel.New(kernel.Info{Name: "x"}, declared(t), &kernel.Options{Deny: []string{"delete_document"}}); err == nil {
		t.Fatal("an unknown deny entry was accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	good := []string{"http://127.0.0.1:3030", "https://pad.example/prefix/", "http://rustpad.lan"}
	for _, u := range good {
		if err := (rustpad.Config{URL: u}).Validate(); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	bad := []string{"", "ftp://h", "ws://h", "http://u:p@h", "http://h?q=1", "http://h#f", "h", "http://", "mailto:x@y"}
	for _, u := range bad {
		err := (rustpad.Config{URL: u}).Validate()
		if !errors.Is(err, rustpad.ErrConfig) {
			t.Errorf("%q accepted: %v", u, err)
		} else if len(u) > 3 && strings.Contains(err.Error(), u) {
			t.Errorf("the error echoes the URL: %v", err)
		}
	}
	if w := (rustpad.Config{URL: "http://rustpad.lan", InsecureTLS: true}).Warnings(); len(w) != 2 {
		t.Errorf("warnings %v", w)
	}
	if w := (rustpad.Config{URL: "http://127.0.0.1:1"}).Warnings(); len(w) != 0 {
		t.Errorf("warnings %v", w)
	}
}
