package authz_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

var zoneType = authz.ResourceType{Name: "Dns::Zone", Attrs: map[string]authz.AttrType{"zone": authz.String, "id": authz.String, "nameLabels": authz.StringSet}}

type zoneArgs struct {
	Zone string `json:"zone"`
}

type recordsArgs struct {
	Zone    string            `json:"zone"`
	Type    string            `json:"type"`
	TTL     *int              `json:"ttl,omitempty"`
	Values  []string          `json:"values"`
	Ratio   float64           `json:"ratio,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Comment string            `json:"comment,omitempty"`
}

func schemaFor[T any](t testing.TB) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func model(t testing.TB) *authz.Model {
	return &authz.Model{Server: "bulwark-dns", Resources: []authz.ResourceType{zoneType}, Actions: []authz.Action{
		{Name: "list_zones", ReadOnly: true, Targets: []string{authz.ServerType, "Dns::Zone"}, Arguments: schemaFor[struct{}](t)},
		{Name: "get_zone", ReadOnly: true, Targets: []string{"Dns::Zone"}, Arguments: schemaFor[zoneArgs](t)},
		{Name: "delete_zone", Destructive: true, Targets: []string{"Dns::Zone"}, Arguments: schemaFor[zoneArgs](t)},
		{Name: "set_records", Destructive: true, Targets: []string{"Dns::Zone"}, Arguments: schemaFor[recordsArgs](t)},
		{Name: "create_zone", Targets: []string{"Dns::Zone"}, Arguments: schemaFor[zoneArgs](t)},
	}}
}

func zone(name string) authz.Resource {
	return authz.Resource{Type: "Dns::Zone", ID: name, Attrs: map[string]any{"zone": name, "id": "1", "nameLabels": strings.Split(name, ".")}}
}

const entities = `[
 {"uid": {"type": "User", "id": "alice"}, "parents": [{"type": "Group", "id": "team-a"}], "attrs": {}},
 {"uid": {"type": "Group", "id": "team-a"}, "parents": [{"type": "Group", "id": "staff"}], "attrs": {}},
 {"uid": {"type": "User", "id": "root"}, "parents": [{"type": "Group", "id": "admins"}], "attrs": {}}
]`

func parse(t testing.TB, policy string) *authz.Policies {
	t.Helper()
	p, err := authz.Parse(model(t), "test.cedar", []byte(policy), []byte(entities))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParseRefuses: a policy that names an unknown tool, resource type or
// attribute, or that does not parse, is refused with a readable error
// naming the policy.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, policy, entities, want string }{
		{"unknown tool", `@id("p1") permit(principal, action == Action::"drop_zone", resource);`, "", `policy "p1"`},
		{"unknown resource attribute", `permit(principal, action, resource is Dns::Zone) when { resource.owner == "x" };`, "", "owner"},
		{"unknown argument", `permit(principal, action == Action::"get_zone", resource) when { context.arguments.ttl > 3 };`, "", "ttl"},
		{"optional argument without has", `permit(principal, action == Action::"set_records", resource) when { context.arguments.ttl > 3 };`, "", "optional"},
		{"number argument is left out", `permit(principal, action == Action::"set_records", resource) when { context.arguments.ratio > 0 };`, "", "ratio"},
		{"free-form map argument is left out", `permit(principal, action == Action::"set_records", resource) when { context.arguments.labels == {} };`, "", "labels"},
		{"unknown principal attribute", `permit(principal, action, resource) when { principal.role == "admin" };`, "", "role"},
		{"unknown entity type", `permit(principal, action, resource is Pad);`, "", "Pad"},
		{"syntax", `permit(principal action, resource);`, "", "test.cedar"},
		{"duplicate id", `@id("a") permit(principal, action, resource); @id("a") forbid(principal, action, resource);`, "", `"a" is used twice`},
		{"entity with attributes", `permit(principal, action, resource);`, `[{"uid": {"type": "User", "id": "x"}, "parents": [], "attrs": {"plan": "pro"}}]`, "parents only"},
		{"entity of another type", `permit(principal, action, resource);`, `[{"uid": {"type": "Dns::Zone", "id": "x"}, "parents": [], "attrs": {}}]`, "only User and Group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := authz.Parse(model(t), "test.cedar", []byte(tc.policy), []byte(tc.entities))
			if !errors.Is(err, authz.ErrInvalidForTest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want errInvalid mentioning %q", err, tc.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	p := parse(t, `
@id("team-a-zones") permit(principal in Group::"team-a", action, resource is Dns::Zone) when { resource.zone like "*.team-a.example" };
@id("list") permit(principal, action == Action::"list_zones", resource == Server::"bulwark-dns");
@id("admins") permit(principal in Group::"admins", action, resource);
@id("no-ns") forbid(principal, action == Action::"set_records", resource) when { context.arguments.type == "NS" };
@id("ttl-floor") forbid(principal, action == Action::"set_records", resource) when { context.arguments has ttl && context.arguments.ttl < 300 };
@id("agents-confirm") forbid(principal in Group::"staff", action in Action::"destructive", resource) unless { context.confirmed };
`)
	alice := authz.Principal{ID: "alice", Plan: "free", Auth: "apikey"}
	root := authz.Principal{ID: "root", Auth: "oauth"}
	bob := authz.Principal{ID: "bob", Auth: "apikey"}
	ttl := func(n float64) map[string]any {
		return map[string]any{"zone": "x", "type": "A", "values": []any{"1.2.3.4"}, "ttl": n}
	}
	for _, tc := range []struct {
		name      string
		who       authz.Principal
		tool      string
		res       authz.Resource
		args      map[string]any
		confirmed bool
		allow     bool
		policies  string
	}{
		{"delegated zone", alice, "get_zone", zone("www.team-a.example"), map[string]any{"zone": "x"}, false, true, "team-a-zones"},
		{"other zone", alice, "get_zone", zone("bob.example"), map[string]any{"zone": "x"}, false, false, ""},
		{"lookalike zone", alice, "get_zone", zone("team-a.example.evil"), map[string]any{"zone": "x"}, false, false, ""},
		{"stranger", bob, "get_zone", zone("www.team-a.example"), map[string]any{"zone": "x"}, false, false, ""},
		{"list on the server", bob, "list_zones", authz.Resource{}, nil, false, true, "list"},
		{"admin anywhere", root, "delete_zone", zone("bob.example"), map[string]any{"zone": "x"}, true, true, "admins"},
		{"typed argument forbids", root, "set_records", zone("bob.example"), map[string]any{"zone": "x", "type": "NS", "values": []any{}}, true, false, "no-ns"},
		{"long argument forbids", root, "set_records", zone("bob.example"), ttl(60), true, false, "ttl-floor"},
		{"long argument allows", root, "set_records", zone("bob.example"), ttl(3600), true, true, "admins"},
		{"unconfirmed destructive call of a group member", alice, "delete_zone", zone("www.team-a.example"), map[string]any{"zone": "x"}, false, false, "agents-confirm"},
		{"confirmed destructive call", alice, "delete_zone", zone("www.team-a.example"), map[string]any{"zone": "x"}, true, true, "team-a-zones"},
		{"resource of a type the tool does not take", root, "list_zones", authz.Resource{Type: "Rustpad::Pad", ID: "x"}, nil, false, false, ""},
		{"arguments that do not fit deny, when a policy reads them", root, "set_records", zone("a.example"), map[string]any{"zone": 3.0, "type": "A"}, true, false, ""},
		{"arguments no policy reads are not converted", root, "get_zone", zone("a.example"), map[string]any{"zone": 3.0}, false, true, "admins"},
		{"unknown tool", root, "drop_zone", zone("a.example"), nil, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Decide(authz.Request{Principal: tc.who, Action: tc.tool, Resource: tc.res, Arguments: tc.args, Confirmed: tc.confirmed, Transport: "http", Time: time.Unix(0, 0)})
			if d.Allow != tc.allow || strings.Join(d.Policies, ",") != tc.policies {
				t.Fatalf("got allow=%v policies=%v (%s), want %v %q", d.Allow, d.Policies, d.Reason, tc.allow, tc.policies)
			}
		})
	}
}

// TestEvaluationErrorDenies: a permit that would allow does not, when
// another policy's evaluation fails (never fail open).
func TestEvaluationErrorDenies(t *testing.T) {
	p := parse(t, `
@id("all") permit(principal, action, resource);
@id("overflow") forbid(principal, action == Action::"set_records", resource) when { context.arguments has ttl && context.arguments.ttl * 9223372036854775807 > 0 };
`)
	d := p.Decide(authz.Request{Principal: authz.Principal{ID: "x"}, Action: "set_records", Resource: zone("a.example"),
		Arguments: map[string]any{"zone": "a.example", "type": "A", "values": []any{}, "ttl": 7200.0}})
	if d.Allow || strings.Join(d.Errors, ",") != "overflow" {
		t.Fatalf("decision = %+v, want a denial naming the failed policy", d)
	}
}

func TestCouldAllow(t *testing.T) {
	p := parse(t, `
@id("team-a-zones") permit(principal in Group::"team-a", action in Action::"readOnly", resource is Dns::Zone) when { resource.zone like "*.team-a.example" };
@id("no-delete") forbid(principal in Group::"staff", action == Action::"create_zone", resource);
@id("admins") permit(principal in Group::"admins", action, resource);
@id("no-delete-admins") forbid(principal in Group::"admins", action == Action::"delete_zone", resource) when { context.arguments.zone == "keep.example" };
`)
	alice, root, bob := authz.Principal{ID: "alice"}, authz.Principal{ID: "root"}, authz.Principal{ID: "bob"}
	for _, tc := range []struct {
		who  authz.Principal
		tool string
		want bool
	}{
		{alice, "get_zone", true}, {alice, "list_zones", true}, {alice, "delete_zone", false}, {alice, "create_zone", false},
		{root, "delete_zone", true}, {root, "create_zone", true}, {bob, "get_zone", false}, {root, "nope", false},
	} {
		if got := p.CouldAllow(tc.who, tc.tool); got != tc.want {
			t.Errorf("CouldAllow(%s, %s) = %v, want %v", tc.who.ID, tc.tool, got, tc.want)
		}
	}
}

func TestSchemaTypesArguments(t *testing.T) {
	s, err := model(t).Schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`action "set_records" in ["write", "destructive"] appliesTo`,
		`arguments: { "comment"?: String, "ttl"?: Long, "type": String, "values"?: Set<String>, "zone": String }`,
		`namespace Dns { entity Zone { "id": String, "nameLabels": Set<String>, "zone": String }; }`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("schema lacks %q:\n%s", want, s)
		}
	}
}

// TestResourceCacheKeysOnAttributes: the entity cache never answers with
// the attributes of an earlier resource of the same id.
func TestResourceCacheKeysOnAttributes(t *testing.T) {
	p := parse(t, `@id("team-a-zones") permit(principal, action, resource is Dns::Zone) when { resource.zone like "*.team-a.example" && resource.id == "1" };`)
	r := zone("a.team-a.example")
	ask := func(res authz.Resource) bool {
		return p.Decide(authz.Request{Principal: authz.Principal{ID: "x"}, Action: "get_zone", Resource: res, Arguments: map[string]any{"zone": "a"}}).Allow
	}
	if !ask(r) {
		t.Fatal("the first resource was denied")
	}
	other := zone("a.team-a.example")
	other.Attrs["id"] = "2"
	if ask(other) {
		t.Fatal("a resource with another id attribute was decided on the cached one")
	}
	other = zone("a.team-a.example")
	other.Attrs["zone"] = "a.team-b.example"
	if ask(other) {
		t.Fatal("a resource with another zone attribute was decided on the cached one")
	}
}
