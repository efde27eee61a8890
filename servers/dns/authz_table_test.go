package dns_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/identity"
)

// TestCanonicalTargetTable: principals x tools x targets on both
// providers, with hostile spellings of the target. The decision is made on
// the canonical zone every time: the zone the provider in use resolves the
// argument to, by its lower-case name without a trailing dot.
func TestCanonicalTargetTable(t *testing.T) {
	// a zone that exists only on the other provider: its id is given to
	// the provider under test.
	const policy = `
@id("alice-zones") permit(principal == User::"alice", action, resource is Dns::Zone) when { resource.zone like "alice-*.com" || resource.zone == "xn--bcher-kva.com" };
@id("bob-zones") permit(principal == User::"bob", action, resource is Dns::Zone) when { resource.zone like "bob-*.com" };
@id("admins") permit(principal in Group::"admins", action, resource);
`
	// zone names both providers accept (Hetzner serves only registrable
	// domains, so no *.alice.example here)
	zones := []string{"alice-shop.com", "xn--bcher-kva.com", "bob-shop.com", "bob-mail.com", "example.org"}
	mine := func(who, zone string) bool {
		switch who {
		case "admin":
			return true
		case "alice":
			return zone == "xn--bcher-kva.com" || len(zone) > 10 && zone[:6] == "alice-" && zone[len(zone)-4:] == ".com"
		case "bob":
			return len(zone) > 8 && zone[:4] == "bob-" && zone[len(zone)-4:] == ".com"
		}
		return false
	}
	elsewhere := map[string]int64{}
	for _, mk := range backends {
		b := mk.make(t, nil)
		for _, n := range []string{"bob-pad1.com", "bob-pad2.com", "bob-pad3.com", "bob-pad4.com", "bob-pad5.com", "bob-pad6.com", "bob-elsewhere.com"} {
			z, _, err := b.p.CreateZone(t.Context(), dnsCreate(n))
			if err != nil {
				t.Fatal(err)
			}
			elsewhere[mk.name] = z.ID
		}
	}
	forEach(t, func(t *testing.T, mk backendMaker) {
		af := newAuthzFixture(t, mk, policy, delegationEntities, zones...)
		other := "local"
		if mk.name == "local" {
			other = "hetzner"
		}
		foreignID := strconv.FormatInt(elsewhere[other], 10)
		// what the provider under test holds under the foreign id, if anything
		canonForeign := ""
		for name, z := range af.zones {
			if strconv.FormatInt(z.ID, 10) == foreignID {
				canonForeign = name
			}
		}
		targets := []struct{ arg, canon string }{
			{"alice-shop.com", "alice-shop.com"},
			{"ALICE-Shop.COM.", "alice-shop.com"},
			{af.id("alice-shop.com"), "alice-shop.com"},
			{"xn--bcher-kva.com", "xn--bcher-kva.com"},
			{"XN--BCHER-KVA.COM.", "xn--bcher-kva.com"},
			{"bob-shop.com", "bob-shop.com"},
			{"Bob-Shop.Com.", "bob-shop.com"},
			{af.id("bob-shop.com"), "bob-shop.com"},
			{"bob-alice-shop.com", "bob-alice-shop.com"}, // absent, and only looks like alice's
			{"bob-elsewhere.com", "bob-elsewhere.com"},   // exists on the other provider only
			{foreignID, canonForeign},                    // the other provider's id
			{"99999999", ""},
		}
		for _, who := range []struct{ id, key string }{{"alice", aliceKey}, {"bob", bobKey}, {"admin", adminKey}} {
			for _, tool := range []string{"get_zone", "export_zonefile", "delete_zone", "change_zone_ttl"} {
				for _, tg := range targets {
					args := map[string]any{"zone": tg.arg}
					if tool == "change_zone_ttl" {
						args["ttl"] = 3600
					}
					raw, _ := json.Marshal(args)
					d, res, err := af.k.CheckAuthz(t.Context(), identity.Principal{ID: who.id, Scheme: identity.SchemeAPIKey}, "http", tool, raw)
					if err != nil {
						t.Fatalf("%s %s %s: %v", who.id, tool, tg.arg, err)
					}
					if res.ID != tg.canon {
						t.Errorf("%s %q: resolved to %q, want %q", tool, tg.arg, res.ID, tg.canon)
					}
					want := mine(who.id, tg.canon)
					if d.Allow != want {
						t.Errorf("%s %s %q: allow %v, want %v (%s)", who.id, tool, tg.arg, d.Allow, want, d.Reason)
					}
					got := af.call(t, who.key, tool, args)
					if denied := got.code() == "permission_denied"; denied == want {
						t.Errorf("over HTTP %s %s %q: %q %s", who.id, tool, tg.arg, got.code(), got.text())
					}
				}
			}
		}
		if got := af.call(t, aliceKey, "get_zone", map[string]any{"zone": "bücher.com"}); got.code() != "invalid_argument" {
			t.Errorf("a Unicode zone name: %q, want invalid_argument before any decision", got.code())
		}
	})
}
