package authz

import (
	"maps"
	"slices"
	"strings"
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

// TestArgumentFields: the arguments record holds only the fields some
// policy reads by name; any other use of context.arguments, or of context,
// reads them all.
func TestArgumentFields(t *testing.T) {
	for _, tc := range []struct {
		policy string
		all    bool
		fields string
	}{
		{`permit(principal, action, resource);`, false, ""},
		{`permit(principal, action, resource) when { context.arguments.type == "A" };`, false, "type"},
		{`permit(principal, action, resource) when { context.arguments has ttl && context.arguments.ttl > 1 } unless { context["arguments"]["zone"] == "z" };`, false, "ttl,zone"},
		{`permit(principal, action, resource) when { context.arguments.records.contains({"value": "v"}) };`, false, "records"},
		{`permit(principal, action, resource) when { context.arguments == context.arguments };`, true, ""},
		{`permit(principal, action, resource) when { context has arguments };`, true, ""},
		{`permit(principal, action, resource) when { context == context };`, true, ""},
		{`permit(principal, action, resource) when { context.transport == "stdio" };`, false, ""},
	} {
		list, err := cedar.NewPolicyListFromBytes("t", []byte(tc.policy))
		if err != nil {
			t.Fatal(err)
		}
		all, fields := argumentFields((*xast.Policy)(list[0].AST()))
		if got := strings.Join(slices.Sorted(maps.Keys(fields)), ","); all != tc.all || !tc.all && got != tc.fields {
			t.Errorf("%s: all=%v fields=%q, want %v %q", tc.policy, all, got, tc.all, tc.fields)
		}
	}
}
