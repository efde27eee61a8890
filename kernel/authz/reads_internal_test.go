package authz

import (
	"testing"

	"github.com/cedar-policy/cedar-go"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
)

// TestPolicyReads: what a policy reads decides what a request builds; the
// detection errs on the side of reading (a false "reads" costs time, a
// false "does not read" would decide on missing data).
func TestPolicyReads(t *testing.T) {
	allContext := reads{arguments: true, transport: true, confirmed: true, time: true}
	for _, tc := range []struct {
		policy string
		want   reads
	}{
		{`permit(principal, action, resource);`, reads{}},
		{`permit(principal, action, resource is Dns::Zone);`, reads{}},
		{`permit(principal, action, resource) when { context.transport == "stdio" && context.confirmed && context.time > 0 };`, reads{transport: true, confirmed: true, time: true}},
		{`permit(principal, action, resource) when { context.transport == "stdio" };`, reads{transport: true}},
		{`permit(principal, action, resource) when { context.arguments has zone };`, reads{arguments: true}},
		{`permit(principal, action, resource) when { context["arguments"] has zone };`, reads{arguments: true}},
		{`permit(principal, action, resource) when { context has arguments };`, allContext},
		{`permit(principal, action, resource) when { context == context };`, allContext},
		{`permit(principal, action, resource) when { context.other == 1 };`, allContext},
		{`permit(principal, action, resource) when { resource.zone == "a" };`, reads{resource: true}},
		{`permit(principal, action, resource) unless { resource has zone && context.arguments.x == 1 };`, reads{arguments: true, resource: true}},
		{`permit(principal, action, resource) when { resource has zone } unless { context.time < 1 };`, reads{time: true, resource: true}},
	} {
		list, err := cedar.NewPolicyListFromBytes("t", []byte(tc.policy))
		if err != nil {
			t.Fatal(err)
		}
		if got := policyReads((*xast.Policy)(list[0].AST())); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.policy, got, tc.want)
		}
	}
}
