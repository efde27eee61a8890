package rustpad_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/rustpad"
)

const snapDir = "testdata/toolsnaps"

func update() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// TestToolSnapshots pins each tool's advertised tools/list entry: name,
// title, description, annotations and input schema (confirmToken included).
// UPDATE_GOLDEN=1 rewrites the files.
func TestToolSnapshots(t *testing.T) {
	f := newFixture(t, setup{})
	seen := map[string]bool{}
	for _, tool := range listTools(t, f) {
		seen[tool.Name+".json"] = true
		entry := map[string]any{"name": tool.Name, "title": tool.Title, "description": tool.Description,
			"annotations": tool.Annotations, "inputSchema": tool.InputSchema}
		got, err := json.MarshalIndent(entry, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(snapDir, tool.Name+".json")
		if update() {
			if err := os.MkdirAll(snapDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no snapshot (run with UPDATE_GOLDEN=1): %v", tool.Name, err)
			continue
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s: the advertised tool differs from %s (UPDATE_GOLDEN=1 if intended):\n%s", tool.Name, path, firstDiff(string(want), string(got)))
		}
	}
	files, _ := os.ReadDir(snapDir)
	for _, fi := range files {
		if !seen[fi.Name()] {
			t.Errorf("%s: snapshot of a tool that no longer exists", fi.Name())
		}
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, wl, gl)
		}
	}
	return ""
}

const toolDoc = "../../docs/tools-rustpad.md"

// toolDocText is docs/tools-rustpad.md: a header and the generated table.
func toolDocText(t *testing.T) string {
	return "<!-- Generated from servers/rustpad (rustpad.ToolTable over Server.Tools); do not edit.\n" +
		"     Regenerate: UPDATE_GOLDEN=1 go test ./servers/rustpad -run TestToolTable -->\n\n" +
		"# `bulwark rustpad` tools\n\n" + rustpad.ToolTable(declared(t)) + "\n" +
		"Every tool talks to the Rustpad instance at `RUSTPAD_URL`, and everything it returns that came from a pad " +
		"(text, user names, the language, error bodies) arrives inside an untrusted-data envelope. " +
		"Read-only mode (`RUSTPAD_READ_ONLY`) registers only the read-only tools. " +
		"Confirmation: the first call is refused with a single-use token (five minutes) bound to the pad id and " +
		"the text it holds; the second call with the same arguments and that token runs. " +
		"\"Bound to\" names the argument whose exact value the token covers besides the target. " +
		"`set_document` asks only when the pad holds text: an empty pad has nothing to lose.\n"
}

func TestToolTable(t *testing.T) {
	got := toolDocText(t)
	if update() {
		if err := os.WriteFile(toolDoc, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(toolDoc)
	if err != nil {
		t.Fatalf("reading %s (run with UPDATE_GOLDEN=1): %v", toolDoc, err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date (UPDATE_GOLDEN=1 regenerates it):\n%s", toolDoc, firstDiff(string(want), got))
	}
	for name := range policyTable {
		if !strings.Contains(got, "| `"+name+"` |") {
			t.Errorf("%s missing from the table", name)
		}
	}
	contains(t, got, "| `set_document` |", "when the pad holds text; bound to `text`")
}
