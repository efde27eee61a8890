package argschema_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

type args struct {
	Zone  string   `json:"zone"`
	TTL   int      `json:"ttl"`
	Types []string `json:"types,omitempty"`
}

func TestRefinedSchemaIsEnforced(t *testing.T) {
	tool := argschema.Refine(kernel.NewTool(kernel.Spec[args, map[string]int]{
		Name: "t", Description: "d.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(context.Context, *kernel.Call, args) (map[string]int, error) { return map[string]int{}, nil },
	}), map[string]argschema.Rule{
		"zone":  argschema.All(argschema.Pattern(`^[a-z.]+$`), argschema.MinLen(1), argschema.MaxLen(10)),
		"ttl":   argschema.Between(60, 3600),
		"types": argschema.All(argschema.MaxItems(2), argschema.ItemsOf(argschema.Enum([]string{"A", "AAAA"}))),
	})
	srv, err := kernel.New(kernel.Info{Name: "x"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := mcptest.Connect(t, srv, nil)
	for _, c := range []struct {
		args map[string]any
		ok   bool
	}{
		{map[string]any{"zone": "example.com", "ttl": 300}, false}, // too long
		{map[string]any{"zone": "ex.com", "ttl": 300}, true},
		{map[string]any{"zone": "EX", "ttl": 300}, false},
		{map[string]any{"zone": "ex", "ttl": 30}, false},
		{map[string]any{"zone": "ex", "ttl": 300, "types": []string{"MX"}}, false},
		{map[string]any{"zone": "ex", "ttl": 300, "types": []string{"A", "AAAA", "A"}}, false},
		{map[string]any{"zone": "ex", "ttl": 300, "types": []string{"AAAA"}}, true},
	} {
		if res := s.Call(t, "t", c.args); res.IsError == c.ok {
			t.Errorf("%v: ok=%v: %s", c.args, !res.IsError, mcptest.Text(res))
		}
	}
}

// TestRefineUnknownArgumentIsADeclarationError: a rule for an argument the
// tool does not have is reported by kernel.New, like every other
// declaration error (it used to panic), naming the first unknown argument in
// sorted order on every run.
func TestRefineUnknownArgumentIsADeclarationError(t *testing.T) {
	for range 20 {
		tool := argschema.Refine(kernel.NewTool(kernel.Spec[args, map[string]int]{Name: "t", Description: "d.",
			Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: kernel.Open},
			Handle: func(context.Context, *kernel.Call, args) (map[string]int, error) { return nil, nil }}),
			map[string]argschema.Rule{"nope": argschema.MinLen(1), "also_nope": argschema.MinLen(1), "zone": argschema.MinLen(1), "zzz": argschema.MinLen(1)})
		_, err := kernel.New(kernel.Info{Name: "s", Version: "v0"}, []kernel.Tool{tool}, nil)
		if err == nil || !strings.Contains(err.Error(), `tool t: argschema: no argument "also_nope" to refine`) {
			t.Fatalf("New = %v", err)
		}
		if tool.InputSchema().Properties["zone"].MinLength != nil {
			t.Fatal("a refinement was applied although the declaration was refused")
		}
	}
}
