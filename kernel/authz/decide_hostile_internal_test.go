package authz

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// decided decides r and checks the decision against Cedar's on the whole
// request with every policy.
func decided(t *testing.T, p *Policies, r Request) Decision {
	t.Helper()
	got, want := p.Decide(r), p.reference(t, r)
	if got.Allow != want.Allow || !slices.Equal(got.Policies, want.Policies) || !slices.Equal(got.Errors, want.Errors) {
		t.Fatalf("Decide %+v, Cedar %+v", got, want)
	}
	return got
}

func zoneRequest(who, zone string, args map[string]any) Request {
	return Request{Principal: Principal{ID: who}, Action: "get_zone", Transport: "http", Time: time.Unix(1_700_000_000, 0), Arguments: args,
		Resource: Resource{Type: "Dns::Zone", ID: zone, Attrs: map[string]any{"zone": zone, "id": "1", "nameLabels": strings.Split(zone, "."), "serial": 1, "signed": true}}}
}

var okArgs = map[string]any{"zone": "a.example", "type": "A", "values": []any{}}

// TestExtensionsAndRecordsDecide: policies with extension functions
// (ip, decimal, datetime, duration) and record literals decide, forbids
// included.
func TestExtensionsAndRecordsDecide(t *testing.T) {
	m := fuzzModel(t)
	for _, tc := range []struct {
		policy string
		allow  bool
	}{
		{`@id("ip") permit(principal, action, resource) when { ip("127.0.0.1").isLoopback() };`, true},
		{`@id("dec") permit(principal, action, resource) when { decimal("1.5").lessThan(decimal("1.2")) };`, false},
		{`@id("all") permit(principal, action, resource);
@id("rec") forbid(principal, action, resource) when { {a: context.transport} == {a: "http"} };`, false},
		{`@id("all") permit(principal, action, resource);
@id("dt") forbid(principal, action, resource) when { datetime("2024-01-01").toTime() == duration("0ms") && context.transport == "stdio" };`, true},
	} {
		p, err := parse(m, "p", []byte(tc.policy), nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if d := decided(t, p, zoneRequest("alice", "a.example", okArgs)); d.Allow != tc.allow {
			t.Errorf("%s: %+v, want allow %v", tc.policy, d, tc.allow)
		}
	}
}

// TestEvaluationErrorsDeny: a policy whose evaluation fails (a missing
// optional argument, an overflow, a comparison of a string) is reported,
// as Cedar does, and the call is denied although another policy permits
// it.
func TestEvaluationErrorsDeny(t *testing.T) {
	m := fuzzModel(t)
	for _, cond := range []string{
		`context.arguments.ttl > 0`,
		`resource.serial + 9223372036854775807 > 0`,
		`context.time * 9223372036854775807 > 0`,
		`resource.zone < "b"`,
		`principal.nope == 1`,
		`User::"nobody".plan == ""`,
		`context.arguments.zone`,
		`principal in ["a"]`,
	} {
		policy := `@id("all") permit(principal, action, resource);
@id("bad") permit(principal, action, resource) when { ` + cond + ` };`
		p, err := parse(m, "p", []byte(policy), nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if d := decided(t, p, zoneRequest("alice", "a.example", okArgs)); d.Allow || !slices.Equal(d.Errors, []string{"bad"}) || !strings.Contains(d.Reason, "evaluation failed") {
			t.Errorf("%s: %+v, want a denial naming the failed policy", cond, d)
		}
	}
}

// TestLikeBudget: a pattern of many wildcards against a long zone name
// costs what cedar-go's matcher costs: linear in the name per wildcard, no
// backtracking blow-up.
func TestLikeBudget(t *testing.T) {
	m := fuzzModel(t)
	pattern := strings.Repeat("*a", 64) + "*b"
	p, err := parse(m, "p", []byte(`@id("like") permit(principal, action, resource) when { resource.zone like "`+pattern+`" };`), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	zone := strings.Repeat("a", 1<<20) // 1 MiB, no b: every wildcard fails
	start := time.Now()
	if d := decided(t, p, zoneRequest("alice", zone, okArgs)); d.Allow {
		t.Fatalf("%+v", d)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("a like over 1 MiB took %v", el)
	}
}

// TestSetBudget: a set operation over an argument of 20,000 elements is
// decided by Cedar's hashed sets in well under a second, and decided
// right.
func TestSetBudget(t *testing.T) {
	m := fuzzModel(t)
	p, err := parse(m, "p", []byte(`@id("all") permit(principal, action, resource) when { context.arguments.values.containsAll(context.arguments.values) };`), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	values := make([]any, 20_000)
	for i := range values {
		values[i] = strings.Repeat("v", i%50)
	}
	start := time.Now()
	if d := decided(t, p, zoneRequest("alice", "a.example", map[string]any{"zone": "a", "type": "A", "values": values})); !d.Allow {
		t.Fatalf("%+v: want Cedar to allow", d)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("containsAll over 20,000 values took %v", el)
	}
}

// TestEntityLiteralReadsResource: a condition that reads the resource
// through an entity literal (no `resource` in it) gets the resource's
// attributes; once, the resource was built without them and the policy
// failed where Cedar on the whole request permits.
func TestEntityLiteralReadsResource(t *testing.T) {
	m := fuzzModel(t)
	for _, policy := range []string{
		`@id("lit") permit(principal, action, resource) when { Dns::Zone::"a.example".zone == "a.example" };`,
		`@id("lit") permit(principal, action, resource) when { Dns::Zone::"a.example".zone == "a.example" && ip("10.0.0.1").isIpv4() };`,
	} {
		p, err := parse(m, "p", []byte(policy), nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if d := decided(t, p, zoneRequest("alice", "a.example", okArgs)); !d.Allow {
			t.Errorf("%s: %+v", policy, d)
		}
	}
}

// TestManyPolicies: a decision with 70 policies in play names all those
// that permit.
func TestManyPolicies(t *testing.T) {
	m := fuzzModel(t)
	var b strings.Builder
	for i := range 70 {
		fmt.Fprintf(&b, "@id(\"p%02d\") permit(principal, action, resource) when { context.time > %d };\n", i, 1_700_000_000-i)
	}
	p, err := parse(m, "p", []byte(b.String()), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := decided(t, p, zoneRequest("alice", "a.example", okArgs)); !d.Allow || len(d.Policies) != 69 {
		t.Fatalf("%+v", d)
	}
}
