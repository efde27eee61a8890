package kernel_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

type copyArgs struct {
	From []string `json:"from"`
	To   string   `json:"to"`
}

// TestEveryTargetIsDecided: a tool declared WithTargets is allowed only
// when every target is; the first denied refuses the call and names its
// policy; no target is the server; a resolver's error refuses before any
// decision. The audit names the policies and counts the targets, and
// CheckAuthzTargets answers for each.
func TestEveryTargetIsDecided(t *testing.T) {
	pf := filepath.Join(t.TempDir(), "p.cedar")
	if err := os.WriteFile(pf, []byte(`@id("all") permit(principal, action, resource);
@id("not-b") forbid(principal, action, resource is Test::Zone) when { resource.zone == "b" };`), 0o600); err != nil {
		t.Fatal(err)
	}
	ran := 0
	tool := kernel.NewTool(kernel.Spec[copyArgs, map[string]int]{
		Name: "copy_items", Description: "Copy items.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, copyArgs) (map[string]int, error) {
			ran++
			return map[string]int{"copied": 1}, nil
		},
	})
	tool = kernel.WithTargets(tool, itemType, func(_ context.Context, _ *kernel.Call, args kernel.Args) ([]authz.Resource, error) {
		from, _ := args.Strings("from")
		to, _ := args.String("to")
		if to == "bad" {
			return nil, kernel.Errorf(kernel.InvalidArgument, "no canonical form")
		}
		var out []authz.Resource
		for _, z := range append(from, to) {
			if z != "" {
				out = append(out, authz.Resource{Type: itemType.Name, ID: z, Attrs: map[string]any{"zone": z}})
			}
		}
		return out, nil
	})
	var log mcptest.AuditLog
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool}, &kernel.Options{Authz: &authz.Config{PolicyFile: pf}, Audit: &log})
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, srv, nil)
	for _, args := range []map[string]any{{"from": []any{"a", "b"}, "to": "c"}, {"from": []any{"a"}, "to": "b"}, {"from": []any{"b"}, "to": "a"}} {
		res := sess.Call(t, "copy_items", args)
		if !res.IsError || !strings.Contains(mcptest.Text(res), "permission_denied") || !strings.Contains(mcptest.Text(res), "not-b") {
			t.Fatalf("%v: %s", args, mcptest.Text(res))
		}
	}
	if res := sess.Call(t, "copy_items", map[string]any{"from": []any{"a"}, "to": "bad"}); !strings.Contains(mcptest.Text(res), "invalid_argument") {
		t.Fatalf("a resolver's error: %s", mcptest.Text(res))
	}
	for _, args := range []map[string]any{{"from": []any{"a", "c"}, "to": "d"}, {"from": []any{}, "to": ""}} {
		if res := sess.Call(t, "copy_items", args); res.IsError {
			t.Fatalf("%v: %s", args, mcptest.Text(res))
		}
	}
	if ran != 2 {
		t.Fatalf("the handler ran %d times", ran)
	}
	recs := log.Records()
	last := recs[len(recs)-2]
	if last.Authz != "allow" || last.Attrs["authz_targets"] != "3" || strings.Join(last.AuthzPolicies, ",") != "all" {
		t.Fatalf("the audit record of an allowed call on three targets: %+v", last)
	}
	if recs[0].Authz != "deny" || strings.Join(recs[0].AuthzPolicies, ",") != "not-b" {
		t.Fatalf("the audit record of a denied call: %+v", recs[0])
	}
	all, err := srv.CheckAuthzTargets(context.Background(), identity.Principal{ID: "x"}, "http", "copy_items", []byte(`{"from":["a","b"],"to":"c"}`))
	if err != nil || len(all) != 3 || !all[0].Decision.Allow || all[1].Decision.Allow || all[1].Resource.ID != "b" || !all[2].Decision.Allow {
		t.Fatalf("CheckAuthzTargets: %+v, %v", all, err)
	}
	d, res, err := srv.CheckAuthz(context.Background(), identity.Principal{ID: "x"}, "http", "copy_items", []byte(`{"from":["a","b"],"to":"c"}`))
	if err != nil || d.Allow || res.ID != "b" {
		t.Fatalf("CheckAuthz: %+v %+v %v", d, res, err)
	}
	_, err = srv.CheckAuthzTargets(context.Background(), identity.Principal{ID: "x"}, "http", "copy_items", []byte(`{"from":["a"],"to":"bad"}`))
	if te := (*kernel.Error)(nil); !errors.As(err, &te) || te.Code != kernel.InvalidArgument {
		t.Fatalf("CheckAuthzTargets with a resolver's error: %v", err)
	}
}
