package rustpad_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/servers/rustpad"
)

// TestPadTargetTable: principals x tools x pad ids, hostile spellings
// included. Pad ids are exact (Rustpad's are case-sensitive): the decision
// is on the id the call acts on, and a spelling that is not a pad id is
// refused before any decision.
func TestPadTargetTable(t *testing.T) {
	pf := filepath.Join(t.TempDir(), "p.cedar")
	policy := `@id("alice-pads") permit(principal == User::"alice", action, resource is Rustpad::Pad) when { resource.id like "alice-*" };
@id("stats") permit(principal, action == Action::"get_stats", resource);
@id("readers") permit(principal == User::"reader", action in Action::"readOnly", resource);`
	if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := rustpad.New(rustpad.Config{URL: "http://127.0.0.1:9"}, rustpad.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Info{Name: "bulwark-rustpad"}, srv.Tools(), &kernel.Options{Authz: &authz.Config{PolicyFile: pf}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who, tool, id string
		allow         bool
		invalid       bool
	}{
		{"alice", "get_document", "alice-notes", true, false},
		{"alice", "set_document", "alice-notes", true, false},
		{"alice", "set_document", "Alice-notes", false, false}, // another pad
		{"alice", "set_document", "bob-notes", false, false},
		{"alice", "append_to_document", "bob-alice-notes", false, false},
		{"alice", "get_document", "alice-notes/../bob", false, true},
		{"alice", "get_document", " alice-notes", false, true},
		{"alice", "get_document", "..", false, true},
		{"alice", "create_document", "", false, false}, // a random pad: the server, not alice's
		{"alice", "get_stats", "", true, false},
		{"reader", "get_document", "bob-notes", true, false},
		{"reader", "set_document", "bob-notes", false, false},
		{"bob", "get_document", "alice-notes", false, false},
	} {
		args := map[string]any{}
		if tc.id != "" {
			args["id"] = tc.id
		}
		if tc.tool == "set_document" || tc.tool == "append_to_document" {
			args["text"] = "x"
		}
		raw, _ := json.Marshal(args)
		d, res, err := k.CheckAuthz(t.Context(), identity.Principal{ID: tc.who}, "http", tc.tool, raw)
		if tc.invalid {
			if err == nil {
				t.Errorf("%s %q: decided (%v) on an invalid pad id", tc.tool, tc.id, d.Allow)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s %q: %v", tc.who, tc.tool, tc.id, err)
		}
		if d.Allow != tc.allow || (tc.id != "" && res.ID != tc.id) {
			t.Errorf("%s %s %q: allow %v on %q, want %v (%s)", tc.who, tc.tool, tc.id, d.Allow, res.ID, tc.allow, d.Reason)
		}
	}
}
