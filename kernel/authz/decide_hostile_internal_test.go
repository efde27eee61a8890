package authz

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// decidedBy decides r, checks the decision against Cedar's on the whole
// request, and reports whether the compiled form made it.
func decidedBy(t *testing.T, p *Policies, r Request) (Decision, bool) {
	t.Helper()
	got, want := p.Decide(r), p.reference(t, r)
	if got.Allow != want.Allow || !slices.Equal(got.Policies, want.Policies) || !slices.Equal(got.Errors, want.Errors) {
		t.Fatalf("Decide %+v, Cedar %+v", got, want)
	}
	pl := p.plans[r.Action]
	pe := p.principal(r.Principal)
	rs := pe.rules(pl)
	if !rs.compiled {
		return got, false
	}
	ti, err := pl.target(r.Resource.Type)
	if err != nil {
		return got, false
	}
	_, done := p.decideCompiled(pl, ti, pe, rs, &r)
	return got, done
}

func zoneRequest(who, zone string, args map[string]any) Request {
	return Request{Principal: Principal{ID: who}, Action: "get_zone", Transport: "http", Time: time.Unix(1_700_000_000, 0), Arguments: args,
		Resource: Resource{Type: "Dns::Zone", ID: zone, Attrs: map[string]any{"zone": zone, "id": "1", "nameLabels": strings.Split(zone, "."), "serial": 1, "signed": true}}}
}

var okArgs = map[string]any{"zone": "a.example", "type": "A", "values": []any{}}

// TestOutsideSubsetFallsBackToCedar: a policy the compiled form does not
// cover (an extension function, a record literal) puts its decisions to
// cedar.Authorize, which still decides them, forbids included.
func TestOutsideSubsetFallsBackToCedar(t *testing.T) {
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
		d, compiled := decidedBy(t, p, zoneRequest("alice", "a.example", okArgs))
		if compiled {
			t.Errorf("%s: decided by the compiled form", tc.policy)
		}
		if d.Allow != tc.allow {
			t.Errorf("%s: %+v, want allow %v", tc.policy, d, tc.allow)
		}
	}
}

// TestCompiledErrorDenies: a policy whose evaluation fails (a missing
// optional argument, an overflow, a comparison of a string) is skipped and
// reported, as Cedar does, and the call is denied although another policy
// permits it.
func TestCompiledErrorDenies(t *testing.T) {
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
		d, compiled := decidedBy(t, p, zoneRequest("alice", "a.example", okArgs))
		if !compiled {
			t.Errorf("%s: not decided by the compiled form", cond)
		}
		if d.Allow || !slices.Equal(d.Errors, []string{"bad"}) || !strings.Contains(d.Reason, "evaluation failed") {
			t.Errorf("%s: %+v, want a denial naming the failed policy", cond, d)
		}
	}
}

// TestLikeBudget: a pattern of many wildcards against a long zone name
// costs what cedar-go's own matcher costs (the compiled form calls it):
// linear in the name per wildcard, no backtracking blow-up.
func TestLikeBudget(t *testing.T) {
	m := fuzzModel(t)
	pattern := strings.Repeat("*a", 64) + "*b"
	p, err := parse(m, "p", []byte(`@id("like") permit(principal, action, resource) when { resource.zone like "`+pattern+`" };`), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	zone := strings.Repeat("a", 1<<20) // 1 MiB, no b: every wildcard fails
	start := time.Now()
	d, compiled := decidedBy(t, p, zoneRequest("alice", zone, okArgs))
	if !compiled || d.Allow {
		t.Fatalf("compiled %v, %+v", compiled, d)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("a like over 1 MiB took %v", el)
	}
}

// TestSetBudget: set operations that would compare more than maxPairs
// element pairs go to Cedar's hashed sets instead of a quadratic loop, and
// are still decided right.
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
	d, compiled := decidedBy(t, p, zoneRequest("alice", "a.example", map[string]any{"zone": "a", "type": "A", "values": values}))
	if compiled || !d.Allow {
		t.Fatalf("compiled %v, %+v: want Cedar to allow", compiled, d)
	}
	d, compiled = decidedBy(t, p, zoneRequest("alice", "a.example", map[string]any{"zone": "a", "type": "A", "values": values[:20]}))
	if !compiled || !d.Allow {
		t.Fatalf("compiled %v, %+v: want the compiled form to allow", compiled, d)
	}
}

// TestEntityLiteralReadsResource: a condition that reads the resource
// through an entity literal (no `resource` in it) gets the resource's
// attributes on the Cedar path too; before, that path built the resource
// without them and the policy failed where Cedar on the whole request
// permits.
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
		if d, _ := decidedBy(t, p, zoneRequest("alice", "a.example", okArgs)); !d.Allow {
			t.Errorf("%s: %+v", policy, d)
		}
	}
}

// TestManyPoliciesGoToCedar: a decision with more than maxCompiled
// policies in play is made by Cedar, and made right.
func TestManyPoliciesGoToCedar(t *testing.T) {
	m := fuzzModel(t)
	var b strings.Builder
	for i := range maxCompiled + 6 {
		fmt.Fprintf(&b, "@id(\"p%02d\") permit(principal, action, resource) when { context.time > %d };\n", i, 1_700_000_000-i)
	}
	p, err := parse(m, "p", []byte(b.String()), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	d, compiled := decidedBy(t, p, zoneRequest("alice", "a.example", okArgs))
	if compiled || !d.Allow || len(d.Policies) != maxCompiled+5 {
		t.Fatalf("compiled %v, %+v", compiled, d)
	}
}
