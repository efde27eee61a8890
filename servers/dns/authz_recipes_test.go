package dns_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
)

var recipeRe = regexp.MustCompile("(?s)<!-- recipe:([a-z-]+) -->\n```cedar\n(.*?)```")

// recipes reads the Cedar recipes of docs/authorization.md by name.
func recipes(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/authorization.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range recipeRe.FindAllStringSubmatch(string(doc), -1) {
		out[m[1]] = m[2]
	}
	return out
}

const recipeEntities = `[
 {"uid": {"type": "User", "id": "rita"}, "parents": [{"type": "Group", "id": "readers"}], "attrs": {}},
 {"uid": {"type": "User", "id": "anna"}, "parents": [{"type": "Group", "id": "team-a"}], "attrs": {}},
 {"uid": {"type": "User", "id": "bot"}, "parents": [{"type": "Group", "id": "agents"}], "attrs": {}},
 {"uid": {"type": "User", "id": "sam"}, "parents": [{"type": "Group", "id": "staff"}], "attrs": {}},
 {"uid": {"type": "User", "id": "root"}, "parents": [{"type": "Group", "id": "break-glass"}, {"type": "Group", "id": "staff"}], "attrs": {}},
 {"uid": {"type": "User", "id": "olga"}, "parents": [{"type": "Group", "id": "ops"}], "attrs": {}}
]`

type recipeCase struct {
	who, transport, tool string
	args                 map[string]any
	allow                bool
}

// TestRecipes loads every recipe of docs/authorization.md as written and
// checks the calls its sentence promises, and what tools/list shows.
func TestRecipes(t *testing.T) {
	rs := recipes(t)
	zone := func(z string) map[string]any { return map[string]any{"zone": z} }
	rrset := func(z, typ string) map[string]any {
		return map[string]any{"zone": z, "name": "sub", "type": typ, "records": []any{map[string]any{"value": "ns1.example.net."}}}
	}
	ttl := map[string]any{"zone": "www.team-a.example", "ttl": 3600}
	table := map[string]struct {
		cases []recipeCase
		lists map[string][]string // principal -> tools that must (name) or must not (!name) be listed
	}{
		"read-only-group": {cases: []recipeCase{
			{"rita", "http", "get_zone", zone("anything.example"), true},
			{"rita", "http", "list_zones", map[string]any{}, true},
			{"rita", "http", "delete_zone", zone("anything.example"), false},
			{"rita", "http", "create_rrset", rrset("anything.example", "A"), false},
			{"anna", "http", "get_zone", zone("anything.example"), false},
		}, lists: map[string][]string{"rita": {"get_zone", "list_rrsets", "!delete_zone", "!create_zone"}, "anna": {"!get_zone"}}},
		"team-delegation": {cases: []recipeCase{
			{"anna", "http", "get_zone", zone("www.team-a.example"), true},
			{"anna", "http", "delete_zone", zone("WWW.TEAM-A.EXAMPLE."), true},
			{"anna", "http", "get_zone", zone("evil-team-a.example"), false},
			{"anna", "http", "get_zone", zone("team-a.example.evil.com"), false},
			{"anna", "http", "list_zones", map[string]any{}, true},
			{"rita", "http", "get_zone", zone("www.team-a.example"), false},
		}},
		"agents-confirm": {cases: []recipeCase{
			{"bot", "http", "delete_zone", zone("a.example"), true},
			{"bot", "http", "change_zone_ttl", ttl, false},
			{"bot", "http", "create_rrset", rrset("a.example", "A"), true},
			{"bot", "http", "get_zone", zone("a.example"), true},
		}},
		"break-glass": {cases: []recipeCase{
			{"sam", "http", "create_rrset", rrset("a.example", "A"), true},
			{"sam", "http", "create_rrset", rrset("a.example", "NS"), false},
			{"root", "http", "create_rrset", rrset("a.example", "NS"), false},
			{"root", "stdio", "create_rrset", rrset("a.example", "NS"), true},
			{"rita", "stdio", "get_zone", zone("a.example"), false},
		}},
		"deny-by-default": {cases: []recipeCase{
			{"olga", "http", "delete_zone", zone("a.example"), true},
			{"rita", "http", "get_zone", zone("a.example"), false},
			{"nobody", "stdio", "list_zones", map[string]any{}, false},
		}, lists: map[string][]string{"nobody": {"!list_zones", "!get_zone"}, "olga": {"delete_zone"}}},
		"allow-zones": {cases: []recipeCase{
			{"x", "http", "get_zone", zone("Example.COM."), true},
			{"x", "http", "get_zone", zone("example.net"), false},
			{"x", "http", "list_zones", map[string]any{}, true},
		}},
		"read-only": {cases: []recipeCase{
			{"x", "http", "get_zone", zone("a.example"), true},
			{"x", "http", "create_zone", map[string]any{"name": "a.example", "mode": "primary"}, false},
		}, lists: map[string][]string{"x": {"get_zone", "!create_zone", "!delete_zone"}}},
		"deny-tools": {cases: []recipeCase{
			{"x", "http", "delete_zone", zone("a.example"), false},
			{"x", "http", "change_zone_ttl", map[string]any{"zone": "a.example", "ttl": 3600}, true},
		}, lists: map[string][]string{"x": {"!delete_zone", "change_zone_ttl"}}},
	}
	for name := range rs {
		if _, ok := table[name]; !ok {
			t.Errorf("recipe %q in the docs has no test", name)
		}
	}
	for name, tc := range table {
		t.Run(name, func(t *testing.T) {
			src, ok := rs[name]
			if !ok {
				t.Fatalf("recipe %q is not in docs/authorization.md", name)
			}
			k := recipeServer(t, src)
			for _, c := range tc.cases {
				raw, _ := json.Marshal(c.args)
				d, _, err := k.CheckAuthz(t.Context(), identity.Principal{ID: c.who, Scheme: identity.SchemeAPIKey}, c.transport, c.tool, raw)
				if err != nil {
					t.Fatalf("%s %s: %v", c.who, c.tool, err)
				}
				if d.Allow != c.allow {
					t.Errorf("%s over %s: %s %v: allow %v, want %v (%s)", c.who, c.transport, c.tool, c.args, d.Allow, c.allow, d.Reason)
				}
			}
			for who, want := range tc.lists {
				for _, w := range want {
					tool, listed := w, true
					if w[0] == '!' {
						tool, listed = w[1:], false
					}
					if got := k.Authorizer().Policies().CouldAllow(authz.Principal{ID: who}, tool); got != listed {
						t.Errorf("tools/list for %s: %s listed %v, want %v", who, tool, got, listed)
					}
				}
			}
		})
	}
}

func recipeServer(t *testing.T, policy string) *kernel.Server {
	t.Helper()
	dir := t.TempDir()
	pf, ef := filepath.Join(dir, "p.cedar"), filepath.Join(dir, "e.json")
	if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ef, []byte(recipeEntities), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := localzone.New(t.TempDir(), &localzone.Options{DisableSync: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := dns.New(dns.Config{}, dns.Deps{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Info{Name: "bulwark-dns"}, srv.Tools(), &kernel.Options{Authz: &authz.Config{PolicyFile: pf, EntitiesFile: ef}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}
