package authz_test

import (
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// TestRepeatedDecisionAllocatesNothing: a decision the memo answers (the
// same principal, tool, resource and arguments again) allocates nothing —
// also when the policies read a set attribute of the resource, an
// argument, the principal's groups, or a pattern.
func TestRepeatedDecisionAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" || authz.RaceEnabled {
		t.Skip("coverage counters allocate; the race detector drops pooled buffers")
	}
	const policy = `
@id("team-a") permit(principal in Group::"team-a", action, resource is Dns::Zone) when { resource.zone like "*.team-a.example" && resource.nameLabels.contains("team-a") };
@id("local") permit(principal, action in Action::"readOnly", resource is Dns::Zone) when { principal.groups.contains("staff") || resource.nameLabels.containsAny(["example"]) };
@id("no-ns") forbid(principal, action, resource) when { context.arguments has zone && context.arguments.zone == "ns-forbidden" };
`
	p := parse(t, policy)
	r := authz.Request{Principal: authz.Principal{ID: "alice", Auth: "apikey"}, Action: "get_zone", Transport: "http",
		Resource: zone("x.team-a.example"), Arguments: map[string]any{"zone": "x.team-a.example"}}
	if d := p.Decide(r); !d.Allow || len(d.Policies) != 2 {
		t.Fatalf("%+v", d)
	}
	if n := testing.AllocsPerRun(200, func() { p.Decide(r) }); n != 0 {
		t.Fatalf("a repeated decision allocates %.1f times", n)
	}
}
