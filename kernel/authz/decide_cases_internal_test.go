package authz

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestCachedResourceDecidesOnItsAttrs: a decision follows the attributes
// the call's Resource holds, whether a resolver hands on a ResourceCache
// entry's map or builds its own from it (a copy with another zone); an
// attribute that does not fit its type denies on every call, cached or not;
// a new policy set (a reload) decides on the same entries with its own
// policies, and the old set still decides right.
func TestCachedResourceDecidesOnItsAttrs(t *testing.T) {
	m := fuzzModel(t)
	policy := []byte(`@id("team") permit(principal, action, resource is Dns::Zone) when { resource.zone like "*.team.example" && resource.nameLabels.contains("team") };`)
	p, err := Parse(m, "p", policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cache ResourceCache
	build := func(s string, _ int64) Resource {
		z := strings.ToLower(s)
		attrs := map[string]any{"zone": z, "id": "", "nameLabels": strings.Split(z, "."), "serial": int64(1), "signed": false}
		if z == "bad.team.example" {
			attrs["signed"] = "yes" // does not fit Bool
		}
		return Resource{Type: "Dns::Zone", ID: z, Attrs: attrs}
	}
	req := func(res Resource) Request {
		return Request{Principal: Principal{ID: "alice"}, Action: "get_zone", Resource: res, Transport: "stdio",
			Arguments: map[string]any{"zone": res.ID, "type": "A", "values": []any{}}}
	}
	a := cache.Get("A.Team.Example", 0, build)
	for i := range 3 {
		if d := p.Decide(req(a)); !d.Allow {
			t.Fatalf("call %d on a cached zone of the team: %+v", i, d)
		}
	}

	// a resolver that builds its own map from the cached Resource: decided
	// on that map, on every call, not on the entry's
	other := a
	other.Attrs = map[string]any{"zone": "b.example", "id": "", "nameLabels": []string{"b", "example"}, "serial": int64(1), "signed": false}
	if d := p.Decide(req(other)); d.Allow {
		t.Fatalf("a resolver's own attributes were ignored for the entry's: %+v", d)
	}
	other.Attrs["signed"] = 3.5 // and they are checked
	if d := p.Decide(req(other)); d.Allow || !strings.Contains(d.Reason, "signed") {
		t.Fatalf("a resolver's attribute that does not fit: %+v", d)
	}

	// an attribute that does not fit denies on every call, cached or not
	bad := cache.Get("bad.team.example", 0, build)
	for i := range 3 {
		if d := p.Decide(req(bad)); d.Allow || !strings.Contains(d.Reason, "signed") {
			t.Fatalf("call %d on a cached zone whose attribute does not fit: %+v", i, d)
		}
	}

	// a new policy set (a reload) decides on the same entry with its own
	// policies
	p2, err := Parse(m, "p", []byte(`@id("none") forbid(principal, action, resource is Dns::Zone) when { resource.zone like "a.*" };`+"\n"+string(policy)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := p2.Decide(req(a)); d.Allow || len(d.Policies) != 1 || d.Policies[0] != "none" {
		t.Fatalf("after a reload: %+v", d)
	}
	if d := p.Decide(req(a)); !d.Allow { // and the old set still decides right
		t.Fatalf("the old set after the new one: %+v", d)
	}
}

// TestStringConditionsMatchCedar: equality with a string literal, like and
// has, on a String attribute of the resource or of context.arguments,
// decide as Cedar does on the whole request for every tool, resource (the
// server too, cached or not) and argument set (absent, null, of another
// type).
func TestStringConditionsMatchCedar(t *testing.T) {
	m := fuzzModel(t)
	policy := `@id("eq") permit(principal, action, resource) when { context.arguments.zone == "x.a.example" };
@id("ne") forbid(principal, action, resource) when { context.arguments.type != "NS" && context.arguments.comment like "ticket-*" };
@id("res") permit(principal, action, resource) when { resource.zone like "*.a.example" || resource.zone == "a.example" };
@id("name") permit(principal, action == Action::"list_zones", resource) when { resource.name == "dns" };
@id("label") forbid(principal, action == Action::"label_zone", resource) unless { context.arguments.comment == "ticket-7" };
@id("has") forbid(principal, action == Action::"set_records", resource) when { context.arguments has comment && context.arguments.comment like "*7" };
@id("hasnt") permit(principal, action == Action::"get_zone", resource) unless { context.arguments has comment };`
	p, err := parse(m, "p", []byte(policy), []byte(fuzzEntities), false)
	if err != nil {
		t.Fatal(err)
	}
	var cache ResourceCache
	args := append(slices.Clone(fuzzArguments), map[string]any{"zone": "x.a.example", "type": 7.0, "values": []any{}, "comment": nil})
	n := 0
	for _, tool := range fuzzTools {
		for ri, res := range fuzzResources {
			if (tool == "list_zones") != (ri == 0) {
				continue
			}
			for ai, a := range args {
				r := Request{Principal: fuzzPrincipals[ai%len(fuzzPrincipals)], Action: tool, Resource: res, Transport: "http", Arguments: a}
				if ai%2 == 1 && ri > 0 {
					r.Resource = cache.Get(strconv.Itoa(ri), 0, func(string, int64) Resource { return res })
				}
				got, want := p.Decide(r), p.reference(nil, r)
				if got.Allow != want.Allow || !slices.Equal(got.Policies, want.Policies) || !slices.Equal(got.Errors, want.Errors) {
					t.Fatalf("request %+v:\nDecide    %+v\nreference %+v", r, got, want)
				}
				n++
			}
		}
	}
	t.Logf("%d requests", n)
}

// TestActionIndexNeverMisleads: a request's ActionIndex only finds the
// plan of the tool it names: an index of another tool, out of range or
// absent decides as by name, for every tool.
func TestActionIndexNeverMisleads(t *testing.T) {
	m := fuzzModel(t)
	p, err := Parse(m, "p", []byte(`@id("w") permit(principal, action in [Action::"set_records", Action::"create_zone"], resource);
@id("r") forbid(principal, action == Action::"get_zone", resource);`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range m.Actions {
		r := Request{Principal: Principal{ID: "alice"}, Action: a.Name, Transport: "stdio", Arguments: fuzzArguments[0]}
		if len(a.Targets) > 0 {
			r.Resource = fuzzResources[1]
		}
		want := p.Decide(r)
		if want.Allow != (a.Name == "set_records" || a.Name == "create_zone") {
			t.Fatalf("%s by name: %+v", a.Name, want)
		}
		for _, idx := range []int{i + 1, 0, -3, len(m.Actions) + 1, (i+1)%len(m.Actions) + 1} {
			r.ActionIndex = idx
			got := p.decide(&r)
			if got.Allow != want.Allow || !slices.Equal(got.Policies, want.Policies) || got.Reason != want.Reason {
				t.Fatalf("%s with ActionIndex %d: %+v, by name %+v", a.Name, idx, got, want)
			}
		}
	}
	r := Request{Principal: Principal{ID: "alice"}, Action: "nope", ActionIndex: 1}
	if d := p.Decide(r); d.Allow || !strings.Contains(d.Reason, "not in the model") {
		t.Fatalf("an unknown tool with the index of a known one: %+v", d)
	}
}

// TestConcurrentDecisionsShareNoState: decisions made at once on one tool
// — principals, resources (cached or not) and arguments all different,
// through the shared caches and memo — give each its own answer, the one
// it gets alone.
func TestConcurrentDecisionsShareNoState(t *testing.T) {
	m := fuzzModel(t)
	p, err := Parse(m, "p", []byte(`@id("zone") permit(principal, action, resource is Dns::Zone) when { resource.zone like "*.a.example" };
@id("alice") permit(principal == User::"alice", action, resource) when { context.arguments has comment && context.arguments.comment == "ticket-7" };
@id("ops") forbid(principal in Group::"ops", action, resource) when { context.arguments has flag && context.arguments.flag };`), []byte(fuzzEntities))
	if err != nil {
		t.Fatal(err)
	}
	var cache ResourceCache
	var reqs []Request
	for pi, pr := range fuzzPrincipals {
		for ri := 1; ri < len(fuzzResources); ri++ {
			for ai, a := range fuzzArguments {
				r := Request{Principal: pr, Action: "label_zone", Resource: fuzzResources[ri], Transport: "http", Arguments: a}
				if (pi+ai)%2 == 0 {
					r.Resource = cache.Get(strconv.Itoa(ri), 0, func(string, int64) Resource { return fuzzResources[ri] })
				}
				reqs = append(reqs, r)
			}
		}
	}
	want := make([]Decision, len(reqs))
	for i := range reqs {
		want[i] = p.Decide(reqs[i])
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 400 {
				i := (n*7 + g*13) % len(reqs)
				if d := p.Decide(reqs[i]); d.Allow != want[i].Allow || !slices.Equal(d.Policies, want[i].Policies) {
					errs <- fmt.Sprintf("request %d at once: %+v, alone: %+v", i, d, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestListingBuildsContextOnce: one request decided on many resources (a
// listing filtering its items) builds its context record once; a request
// whose context differs gets its own, and every decision is Cedar's.
func TestListingBuildsContextOnce(t *testing.T) {
	m := fuzzModel(t)
	p, err := Parse(m, "p", []byte(`@id("zone") permit(principal, action, resource is Dns::Zone) when { resource.zone like "*.a.example" && context.transport == "http" };
@id("ns") forbid(principal, action, resource) when { context.arguments.type == "NS" };`), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := Request{Principal: Principal{ID: "alice"}, Action: "get_zone", Transport: "http", Arguments: fuzzArguments[0]}
	rs := p.rules(p.principal(r.Principal), p.plans["get_zone"])
	var first *keyedContext
	for i, res := range fuzzResources[1:] {
		r.Resource = res
		if got, want := p.Decide(r), p.reference(t, r); got.Allow != want.Allow || !slices.Equal(got.Policies, want.Policies) {
			t.Fatalf("resource %d: %+v, Cedar %+v", i, got, want)
		}
		if i == 0 {
			first = rs.lastContext.Load()
		} else if rs.lastContext.Load() != first {
			t.Fatalf("resource %d: the context was built again", i)
		}
	}
	r.Arguments = fuzzArguments[1] // type NS: another context
	if d := p.Decide(r); d.Allow || !slices.Equal(d.Policies, []string{"ns"}) {
		t.Fatalf("another context: %+v", d)
	}
	if rs.lastContext.Load() == first {
		t.Fatal("a request with another context was decided on the first one's")
	}
}
