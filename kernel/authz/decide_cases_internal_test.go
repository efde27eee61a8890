package authz

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestCachedResourceAttrsOncePerEntry: a cached resource's attributes are
// checked and read once per entry and policy set (loadedAttrs), and every
// decision still follows the attributes the call's Resource holds: a
// resolver that hands on the entry's map is decided on it; one that
// builds its own map (a copy with another zone) on that map, not the
// entry's; a new policy set reads the entry afresh; an attribute that
// does not fit its type denies on every call, from the entry too.
func TestCachedResourceAttrsOncePerEntry(t *testing.T) {
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
	first := a.from.loaded.Load()
	if first == nil {
		t.Fatal("the entry keeps no checked attributes")
	}
	p.Decide(req(cache.Get("A.Team.Example", 0, build)))
	if a.from.loaded.Load() != first {
		t.Fatal("the entry's attributes were checked again for the same policy set")
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

	// a new policy set (a reload) reads the entry afresh, with its own types
	p2, err := Parse(m, "p", []byte(`@id("none") forbid(principal, action, resource is Dns::Zone) when { resource.zone like "a.*" };`+"\n"+string(policy)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := p2.Decide(req(a)); d.Allow || len(d.Policies) != 1 || d.Policies[0] != "none" {
		t.Fatalf("after a reload: %+v", d)
	}
	if a.from.loaded.Load() == first {
		t.Fatal("the new policy set used the old one's checked attributes")
	}
	if d := p.Decide(req(a)); !d.Allow { // and the old set still decides right
		t.Fatalf("the old set after the new one: %+v", d)
	}
}

// TestStringReadsMatchCedar: equality with a string literal, like and has,
// on a String attribute of the resource or of context.arguments
// (stringRead, has: read as a string, not as a value), decide as Cedar does for every tool,
// resource (the server too, cached or not), argument set (absent, null,
// of another type), validated by the kernel or not.
func TestStringReadsMatchCedar(t *testing.T) {
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
				for _, checked := range []bool{false, true} {
					r := Request{Principal: fuzzPrincipals[ai%len(fuzzPrincipals)], Action: tool, Resource: res, Transport: "http", Arguments: a,
						ArgumentsValidated: checked && validated(m, tool, a)}
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
// — each taking the tool's parked evaluation state or one from the pool,
// principals, resources (cached or not) and arguments all different —
// give each its own answer, the one it gets alone.
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
				r := Request{Principal: pr, Action: "label_zone", Resource: fuzzResources[ri], Transport: "http", Arguments: a,
					ArgumentsValidated: validated(m, "label_zone", a)}
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
