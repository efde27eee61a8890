package kernel_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestCollidingKeysStayDistinct (issue 10.8): an upstream object whose keys
// read the same once invisible characters are removed ("note" and
// "no\u200bte") must not give the model a text with a repeated key that a
// client's structuredContent decodes otherwise. Keys stay distinct, and the
// two views hold the same members.
func TestCollidingKeysStayDistinct(t *testing.T) {
	hostile := json.RawMessage(`{"note":"shown","no\u200bte":"hidden","nested":{"x":1,"x\u200b":2,"x\u2060":3},` +
		`"_truncated":"not ours","list":[{"k":1,"\u200bk":2}]}`)
	tool := kernel.NewTool(kernel.Spec[struct{}, json.RawMessage]{
		Name: "hostile_keys", Description: "Returns keys that collide once cleaned.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, struct{}) (json.RawMessage, error) { return hostile, nil },
	})
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, srv, nil)
	res := sess.Call(t, "hostile_keys", map[string]any{})
	if res.IsError {
		t.Fatalf("error: %s", mcptest.Text(res))
	}
	text := mcptest.Text(res)
	data := enveloped(t, text)
	if err := jsonscan.CheckUnique([]byte(data)); err != nil {
		t.Fatalf("the text repeats a key (%v): %s", err, data)
	}
	var fromText, fromStructured map[string]any
	if err := json.Unmarshal([]byte(data), &fromText); err != nil {
		t.Fatal(err)
	}
	mcptest.Structured(t, res, &fromStructured)
	if !reflect.DeepEqual(fromText, fromStructured) {
		t.Fatalf("text and structuredContent disagree:\n%v\n%v", fromText, fromStructured)
	}
	if fromText["note"] != "shown" || fromText["note (2)"] != "hidden" {
		t.Fatalf("a member was lost or renamed otherwise: %v", fromText)
	}
	if n, _ := fromText["nested"].(map[string]any); len(n) != 3 {
		t.Fatalf("nested members %v, want 3", n)
	}
	if !strings.Contains(text, "renamed with a number") {
		t.Fatalf("the note does not say keys were renamed: %s", text)
	}
}

// enveloped returns the data between the envelope's tags.
func enveloped(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "\">\n")
	data, _, ok2 := strings.Cut(rest, "\n</untrusted-data>")
	if !ok || !ok2 {
		t.Fatalf("no envelope in %q", text)
	}
	return data
}
