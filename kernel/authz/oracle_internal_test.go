package authz

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	"github.com/google/jsonschema-go/jsonschema"
)

// reference decides r the plain way: every policy of the set, the whole
// context, every argument, the resource with its attributes, no memo.
func (p *Policies) reference(t *testing.T, r Request) Decision {
	pl, ok := p.plans[r.Action]
	if !ok || pl.target(r.Resource.Type) != nil {
		return Decision{}
	}
	pe := p.principal(r.Principal)
	res, err := p.resource(r.Resource, true)
	if err != nil {
		return Decision{}
	}
	var argv types.Value = emptyRecord
	if pl.readsArgs { // arguments no policy of the tool reads are not converted (TestDecide)
		if argv, err = pl.args.value(r.Arguments); err != nil {
			return Decision{}
		}
	}
	ctx := types.NewRecord(types.RecordMap{"transport": types.String(r.Transport), "confirmed": types.Boolean(r.Confirmed),
		"time": types.Long(r.Time.Unix()), "arguments": argv})
	req := cedar.Request{Principal: pe.entity.UID, Action: pl.uid, Resource: res.UID, Context: ctx}
	dec, diag := cedar.Authorize(p.set, &requestEntities{base: p.entities, principal: pe.entity, resource: res}, req)
	return decision(dec, diag)
}

// TestDecideMatchesReference: every shortcut of Decide — policies cut by
// cedar-go's partial evaluation per tool and principal, a context with
// only the attributes read (after checking every argument), cached
// entities, the memo — gives the decision Cedar gives on the whole request
// with every policy. Random requests from small pools, so that the memo
// answers many of them.
func TestDecideMatchesReference(t *testing.T) {
	type recordsArgs struct {
		Zone    string   `json:"zone"`
		Type    string   `json:"type"`
		TTL     *int     `json:"ttl,omitempty"`
		Values  []string `json:"values"`
		Comment string   `json:"comment,omitempty"`
	}
	rs, err := jsonschema.For[recordsArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	zone := ResourceType{Name: "Dns::Zone", Attrs: map[string]AttrType{"zone": String, "id": String, "nameLabels": StringSet}}
	m := &Model{Server: "dns", Resources: []ResourceType{zone}, Actions: []Action{
		{Name: "get_zone", ReadOnly: true, Targets: []string{"Dns::Zone"}, Arguments: rs},
		{Name: "set_records", Destructive: true, Targets: []string{"Dns::Zone"}, Arguments: rs},
		{Name: "list_zones", ReadOnly: true, Arguments: rs},
	}}
	policy := `
@id("team") permit(principal in Group::"team-a", action, resource is Dns::Zone) when { resource.zone like "*.a.example" };
@id("ops") permit(principal, action in Action::"readOnly", resource) when { principal.groups.contains("ops") };
@id("type") forbid(principal, action == Action::"set_records", resource) when { context.arguments.type == "NS" };
@id("ttl") forbid(principal, action == Action::"set_records", resource) when { context.arguments has ttl && context.arguments.ttl < 300 };
@id("comment") permit(principal == User::"carol", action, resource) when { context.arguments has comment && context.arguments.comment like "ticket-*" };
@id("whole") forbid(principal == User::"dave", action, resource) when { context has arguments && context.arguments.zone == "x.a.example" };
@id("ctx") permit(principal == User::"erin", action, resource) when { context has transport && context.transport == "stdio" && context.time > 100 };
@id("conf") forbid(principal in Group::"agents", action in Action::"destructive", resource) unless { context.confirmed };
`
	entities := `[{"uid": {"type": "User", "id": "alice"}, "parents": [{"type": "Group", "id": "team-a"}], "attrs": {}},
{"uid": {"type": "Group", "id": "ops"}, "parents": [{"type": "Group", "id": "agents"}], "attrs": {}}]`
	p, err := Parse(m, "p", []byte(policy), []byte(entities))
	if err != nil {
		t.Fatal(err)
	}
	principals := []Principal{{ID: "alice"}, {ID: "bob", Groups: []string{"ops"}}, {ID: "carol"}, {ID: "dave", Groups: []string{"team-a"}},
		{ID: "erin", Scopes: []string{"x"}}, {ID: "frank", Groups: []string{"agents", "team-a"}}}
	resources := []Resource{{}, {Type: "Dns::Zone", ID: "x.a.example", Attrs: map[string]any{"zone": "x.a.example", "id": "1", "nameLabels": []string{"x", "a", "example"}}},
		{Type: "Dns::Zone", ID: "b.example", Attrs: map[string]any{"zone": "b.example", "id": "", "nameLabels": []string{"b", "example"}}}}
	args := []map[string]any{
		{"zone": "x.a.example", "type": "A", "values": []any{}},
		{"zone": "y.a.example", "type": "A", "values": []any{}},
		{"zone": "x.a.example", "type": "NS", "values": []any{"n"}},
		{"zone": "x.a.example", "type": "A", "values": []any{}, "ttl": 60.0},
		{"zone": "x.a.example", "type": "A", "values": []any{}, "comment": "ticket-7"},
		{"zone": "x.a.example", "type": "A", "values": []any{}, "comment": "nope"},
		{"zone": 3.0, "type": "A", "values": []any{}},             // an unread argument that does not fit
		{"zone": "x", "type": "A", "values": []any{}, "ttl": 1.5}, // nor does this
		{"zone": "x", "type": "A"},                                // a required argument missing
	}
	sent := make([]string, len(args)) // what each arguments map held before any decision
	for i, a := range args {
		sent[i] = fmt.Sprintf("%#v", a)
	}
	tools := []string{"get_zone", "set_records", "list_zones"}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		r := Request{Principal: principals[rng.IntN(len(principals))], Action: tools[rng.IntN(len(tools))],
			Resource: resources[rng.IntN(len(resources))], Arguments: args[rng.IntN(len(args))], Confirmed: rng.IntN(2) == 0,
			Transport: []string{"stdio", "http"}[rng.IntN(2)], Time: time.Unix(int64(50+100*rng.IntN(2)), 0)}
		got, want := p.Decide(r), p.reference(t, r)
		if got.Allow != want.Allow || !slices.Equal(got.Policies, want.Policies) || !slices.Equal(got.Errors, want.Errors) {
			t.Fatalf("request %d %+v: Decide %+v, reference %+v", i, r, got, want)
		}
	}
	// a decision only reads the arguments: the kernel encodes them once,
	// before step 12 (kernel/handler.go)
	for i, a := range args {
		if got := fmt.Sprintf("%#v", a); got != sent[i] {
			t.Fatalf("arguments %d changed by deciding: %s, sent %s", i, got, sent[i])
		}
	}
}
