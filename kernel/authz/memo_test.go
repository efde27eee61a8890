package authz_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// memoPolicy reads every part of a request a decision can depend on: the
// principal's groups and scopes, the resource's attributes, each context
// attribute and typed arguments (strings, longs, sets, optional fields).
const memoPolicy = `
@id("team-a") permit(principal in Group::"team-a", action, resource is Dns::Zone) when { resource.zone like "*.team-a.example" };
@id("ops") permit(principal, action in Action::"readOnly", resource) when { principal.groups.contains("ops") };
@id("scoped") permit(principal, action == Action::"get_zone", resource) when { principal.scopes.contains("dns:read") && context.transport == "stdio" };
@id("labels") permit(principal, action == Action::"delete_zone", resource is Dns::Zone) when { resource.nameLabels.contains("scratch") && context.confirmed };
@id("no-ns") forbid(principal, action == Action::"set_records", resource) when { context.arguments.type == "NS" };
@id("ttl") forbid(principal, action == Action::"set_records", resource) when { context.arguments has ttl && context.arguments.ttl < 300 };
@id("values") forbid(principal, action == Action::"set_records", resource) when { context.arguments has values && context.arguments.values.contains("6.6.6.6") };
@id("night") forbid(principal, action in Action::"write", resource) when { context.time < 100 };
@id("id") forbid(principal, action, resource is Dns::Zone) when { resource.id == "9" };
@id("plan") permit(principal, action == Action::"create_zone", resource) when { principal.plan == "pro" && principal.auth == "oauth" };
`

// TestMemoMatchesFreshDecisions: the decision memo, the context record
// kept for the next decision, and the per-principal and per-resource
// caches change no decision. Random requests drawn from
// small pools (so that they repeat, and the memo answers) are each decided
// by one long-lived set and by a set parsed afresh for the request; every
// answer must agree. A memo key that left out anything a policy reads, or
// let two requests share a key, would fail here. It runs with and without
// a policy that uses an extension function.
func TestMemoMatchesFreshDecisions(t *testing.T) {
	t.Run("plain", func(t *testing.T) { memoMatchesFresh(t, memoPolicy) })
	t.Run("extension", func(t *testing.T) {
		memoMatchesFresh(t, memoPolicy+`@id("ext") forbid(principal, action, resource) when { ip("10.0.0.1").isLoopback() };`)
	})
}

func memoMatchesFresh(t *testing.T, policy string) {
	warm := parse(t, policy)
	principals := []authz.Principal{
		{ID: "alice", Auth: "apikey"}, {ID: "bob", Auth: "apikey", Groups: []string{"ops"}},
		{ID: "bob", Auth: "apikey"}, {ID: "carol", Auth: "oauth", Plan: "pro", Scopes: []string{"dns:read"}},
		{ID: "carol", Auth: "oauth", Plan: "pro", Scopes: []string{"dns:write"}}, {ID: "carol", Auth: "oauth", Plan: "free"},
		{ID: "dave", Auth: "oauth", Groups: []string{"team-a"}}, {ID: "dave", Auth: "oauth", Groups: []string{"team", "-a"}},
	}
	zones := []authz.Resource{zone("a.team-a.example"), zone("scratch.example"), zone("a.team-b.example"), {},
		{Type: "Dns::Zone", ID: "a.team-a.example", Attrs: map[string]any{"zone": "a.team-a.example", "id": "9", "nameLabels": []string{"a"}}},
		{Type: "Dns::Zone", ID: "a.team-a.example", Attrs: map[string]any{"zone": "a.team-b.example", "id": "1", "nameLabels": []string{"scratch"}}},
		{Type: "Dns::Zone", ID: "x", Attrs: map[string]any{"zone": "x", "id": 1, "nameLabels": []string{"x"}}}, // ill-typed: denied
	}
	args := []map[string]any{
		{"zone": "ab", "type": "A", "values": []any{"1.2.3.4"}},
		{"zone": "a", "type": "bA", "values": []any{"1.2.3.4"}},
		{"zone": "a", "type": "NS", "values": []any{}},
		{"zone": "a", "type": "A", "values": []any{"1.2.3.4", "6.6.6.6"}},
		{"zone": "a", "type": "A", "values": []any{"1.2.3.46.6.6.6"}},
		{"zone": "a", "type": "A", "values": []any{}, "ttl": 60.0},
		{"zone": "a", "type": "A", "values": []any{}, "ttl": 3600.0},
		{"zone": "a", "type": "A", "values": []any{}, "ttl": nil},
		{"zone": "a", "type": "A", "values": []any{}, "ttl": 1.5}, // not a Long: denied where read
		{"zone": 3.0, "type": "A", "values": []any{}},             // ill-typed
		{"zone": "a"},
	}
	tools := []string{"list_zones", "get_zone", "delete_zone", "set_records", "create_zone"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(n int) int { return rng.IntN(n) }
	n := 3000
	if testing.Short() || authz.RaceEnabledForTest {
		n = 600
	}
	for i := range n {
		r := authz.Request{Principal: principals[pick(len(principals))], Action: tools[pick(len(tools))],
			Resource: zones[pick(len(zones))], Arguments: args[pick(len(args))], Confirmed: pick(2) == 0,
			Transport: []string{"stdio", "http"}[pick(2)], Time: time.Unix(int64(50+100*pick(2)), 0)}
		got := warm.Decide(r)
		want := parse(t, policy).Decide(r)
		if got.Allow != want.Allow || !slices.Equal(got.Policies, want.Policies) || !slices.Equal(got.Errors, want.Errors) {
			t.Fatalf("request %d %s: memoized %+v, fresh %+v", i, describe(r), got, want)
		}
	}
}

func describe(r authz.Request) string {
	return fmt.Sprintf("%+v %s %+v %v confirmed=%v %s %d", r.Principal, r.Action, r.Resource, r.Arguments, r.Confirmed, r.Transport, r.Time.Unix())
}
