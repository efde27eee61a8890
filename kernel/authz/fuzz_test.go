package authz_test

import (
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// FuzzParse: a policy file and an entities file of any content either load
// or are refused with errInvalid; a set that loads decides without panic,
// and CouldAllow agrees with Decide that a call it allows is listable.
func FuzzParse(f *testing.F) {
	f.Add(`permit(principal, action, resource);`, `[]`)
	f.Add(`@id("a") permit(principal in Group::"g", action in Action::"readOnly", resource is Dns::Zone) when { resource.zone like "*.x" };`, entities)
	f.Add(`forbid(principal, action == Action::"set_records", resource) when { context.arguments has ttl && context.arguments.ttl < 300 };`, `[{"uid":{"type":"User","id":"u"},"parents":[{"type":"Group","id":"g"}],"attrs":{}}]`)
	f.Add(`permit(principal, action, resource) unless { context.confirmed };`, `[{"uid":{"type":"Group","id":"g"},"parents":[{"type":"Group","id":"g"}],"attrs":{}}]`)
	f.Add("permit(principal, action, resource) when { \"\u202e\" like \"*\" };", `not json`)
	m := model(f)
	f.Fuzz(func(t *testing.T, policy, ents string) {
		p, err := authz.Parse(m, "fuzz.cedar", []byte(policy), []byte(ents))
		if err != nil {
			return
		}
		for _, who := range []string{"alice", "u", "root", ""} {
			pr := authz.Principal{ID: who}
			d := p.Decide(authz.Request{Principal: pr, Action: "get_zone", Resource: zone("a.team-a.example"), Arguments: map[string]any{"zone": "a"}})
			if d.Allow && !p.CouldAllow(pr, "get_zone") {
				t.Fatalf("%q may call get_zone but it is not listed", who)
			}
		}
	})
}
