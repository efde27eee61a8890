package authz

import (
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestMemoBounded: a request whose key would be long (a policy reads a
// long argument) is decided without the memo, so the table holds at most
// memoSlots keys of at most maxKey bytes whatever callers send; and the
// same request is still decided right.
func TestMemoBounded(t *testing.T) {
	s, err := jsonschema.For[struct {
		Text string `json:"text"`
	}](nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{Server: "s", Actions: []Action{{Name: "note", Arguments: s}}}
	p, err := Parse(m, "p", []byte(`@id("short") permit(principal, action, resource) when { context.arguments.text like "a*" };`), nil)
	if err != nil {
		t.Fatal(err)
	}
	long := "a" + strings.Repeat("x", 64<<10)
	for range 3 {
		if d := p.Decide(Request{Principal: Principal{ID: "u"}, Action: "note", Arguments: map[string]any{"text": long}}); !d.Allow {
			t.Fatalf("long argument: %+v", d)
		}
	}
	if d := p.Decide(Request{Principal: Principal{ID: "u"}, Action: "note", Arguments: map[string]any{"text": "b"}}); d.Allow {
		t.Fatalf("short argument: %+v", d)
	}
	n := 0
	for i := range p.memo.slots {
		if e := p.memo.slots[i].Load(); e != nil {
			n++
			if len(e.key) > maxKey {
				t.Fatalf("a %d-byte key was memoized", len(e.key))
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d memo entries, want 1 (the short request)", n)
	}
}
