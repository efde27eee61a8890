package authz

import (
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestMemoBounded: a request whose key would be long (a policy reads a
// long argument) is decided without the memo, so the table holds at most
// memoSlots keys of at most maxKey bytes whatever callers send; and the
// same request is still decided right. (The policy is outside the
// compiled subset: small compiled policies bypass the memo.)
func TestMemoBounded(t *testing.T) {
	s, err := jsonschema.For[struct {
		Text string `json:"text"`
	}](nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{Server: "s", Actions: []Action{{Name: "note", Arguments: s}}}
	p, err := Parse(m, "p", []byte(`@id("short") permit(principal, action, resource) when { context.arguments.text like "a*" && ip("10.0.0.1").isIpv4() };`), nil)
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

// TestDirectRulesBypassMemo: small compiled rules are evaluated on every
// request, repeated or distinct, and never go through the memo (a lookup
// costs more than evaluating them); every decision is the one a fresh set
// makes.
func TestDirectRulesBypassMemo(t *testing.T) {
	s, err := jsonschema.For[struct {
		Name string `json:"name"`
	}](nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{Server: "s", Actions: []Action{{Name: "get", Arguments: s}}}
	policy := []byte(`@id("p") permit(principal, action, resource) when { context.arguments.name like "w*" };`)
	p, err := Parse(m, "p", policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := func(name string) Request {
		return Request{Principal: Principal{ID: "u"}, Action: "get", Arguments: map[string]any{"name": name}}
	}
	check := func(name string) {
		fresh, err := Parse(m, "p", policy, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.Decide(req(name)), fresh.Decide(req(name)); got.Allow != want.Allow || got.Allow != strings.HasPrefix(name, "w") {
			t.Fatalf("%q: %+v, fresh %+v", name, got, want)
		}
	}
	check("w0")
	if rs := p.principal(Principal{ID: "u"}).rules(p.plans["get"]); !rs.direct {
		t.Fatal("the rules are not small enough to be evaluated directly")
	}
	for i := range 200 { // distinct
		check("w" + strings.Repeat("x", i%50) + string(rune('a'+i%26)))
	}
	for range 200 { // repeated
		check("w-same")
		check("v-same")
	}
	for i := range p.memo.slots {
		if p.memo.slots[i].Load() != nil {
			t.Fatal("a direct decision went through the memo")
		}
	}
}
