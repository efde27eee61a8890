package authz

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cedar-policy/cedar-go"
)

// TestOutcomeDecisions: each outcome gets the Decision naming exactly its
// rules, the first time and every time after, past the maxOutcomes kept,
// and the list kept never grows beyond maxOutcomes.
func TestOutcomeDecisions(t *testing.T) {
	rs := &toolRules{}
	for i := range 8 {
		rs.rules = append(rs.rules, rule{id: cedar.PolicyID(fmt.Sprintf("p%d", i))})
	}
	want := func(o outcome) Decision {
		var ids []string
		for i := range 8 {
			if o.mask&(1<<i) != 0 {
				ids = append(ids, fmt.Sprintf("p%d", i))
			}
		}
		return Decision{Allow: o.kind == resPermit && o.mask != 0, Policies: ids}
	}
	for round := range 2 {
		for _, kind := range []uint8{resPermit, resForbid, resError} {
			for mask := range uint64(256) {
				if mask == 0 && kind != resPermit {
					continue // errors and forbids name at least one rule
				}
				o := outcome{kind, mask}
				got, w := rs.decision(o), want(o)
				if got.Allow != w.Allow || !slices.Equal(got.Policies, w.Policies) || (kind == resError) != (len(got.Errors) > 0) {
					t.Fatalf("round %d, outcome %+v: %+v, want %+v", round, o, got, w)
				}
			}
		}
	}
	if n := len(*rs.outcomes.Load()); n != maxOutcomes {
		t.Fatalf("%d outcomes kept, want %d", n, maxOutcomes)
	}
}
