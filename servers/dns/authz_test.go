package dns_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

const (
	aliceKey = "alice-k3y-0123456789abcdef0123456789"
	bobKey   = "bob-k3y-0123456789abcdef0123456789ab"
	adminKey = "admin-k3y-0123456789abcdef0123456789"
)

// delegation is the policy of the two-key tests: each user gets the zones
// below their own name, listing is open (and filtered), admins get all.
const delegation = `
@id("alice-zones") permit(principal == User::"alice", action, resource is Dns::Zone) when { resource.zone like "*.alice.example" };
@id("bob-zones") permit(principal == User::"bob", action, resource is Dns::Zone) when { resource.zone like "*.bob.example" };
@id("listing") permit(principal, action in [Action::"list_zones", Action::"list_zone_actions", Action::"get_zone_action"], resource is Server);
@id("admins") permit(principal in Group::"admins", action, resource);
`

const delegationEntities = `[{"uid": {"type": "User", "id": "admin"}, "parents": [{"type": "Group", "id": "admins"}], "attrs": {}}]`

// authzFixture is a DNS server behind the kernel over HTTP, with three API
// keys and an authorization policy.
type authzFixture struct {
	*fixture
	policyFile string
	url        string
	zones      map[string]dns.Zone // seeded, by name
	audit      chan audit.Record
}

var twoKeyZones = []string{"shop.alice.example", "xn--bcher-kva.alice.example", "shop.bob.example", "mail.bob.example", "example.org"}

func newAuthzFixture(t *testing.T, mk backendMaker, policy, entities string, zones ...string) *authzFixture {
	if len(zones) == 0 {
		zones = twoKeyZones
	}
	t.Helper()
	dir := t.TempDir()
	pf, ef := filepath.Join(dir, "policy.cedar"), filepath.Join(dir, "entities.json")
	if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ef, []byte(entities), 0o600); err != nil {
		t.Fatal(err)
	}
	af := &authzFixture{policyFile: pf, zones: map[string]dns.Zone{}, audit: make(chan audit.Record, 1000)}
	su := setup{kopts: kernel.Options{Authz: &authz.Config{PolicyFile: pf, EntitiesFile: ef},
		Audit: audit.Func(func(_ context.Context, r audit.Record) {
			select {
			case af.audit <- r:
			default: // a long test drops records rather than block its calls
			}
		})},
		before: func(b backend) {
			for _, name := range zones {
				z, _, err := b.p.CreateZone(t.Context(), dns.CreateZoneRequest{Name: name, Mode: dns.ModePrimary})
				if err != nil {
					t.Fatal(err)
				}
				af.zones[name] = z
			}
		}}
	af.fixture = newFixture(t, mk, su)
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(aliceKey) + " free alice\n" +
		identity.HashKey(bobKey) + " free bob\n" + identity.HashKey(adminKey) + " free admin\n"))
	if err != nil {
		t.Fatal(err)
	}
	af.url = mcptest.ServeHTTP(t, af.k, kernel.HTTPOptions{Auth: keys, Guards: httpguard.PipelineOptions{Flood: &httpguard.FloodOptions{Limit: 1 << 20, Window: time.Second}}})
	return af
}

type rpcResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (r rpcResult) code() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.StructuredContent, &e)
	return e.Error.Code
}

func (r rpcResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func (af *authzFixture) rpc(t *testing.T, key, method string, params any) rpcResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, raw := mcptest.Post(t, af.url, string(body), map[string]string{"Authorization": "Bearer " + key})
	var out struct {
		Result *rpcResult `json:"result"`
		Error  any        `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil || out.Result == nil {
		t.Fatalf("%s: status %d, body %s", method, resp.StatusCode, raw)
	}
	return *out.Result
}

func (af *authzFixture) call(t *testing.T, key, tool string, args map[string]any) rpcResult {
	t.Helper()
	return af.rpc(t, key, "tools/call", map[string]any{"name": tool, "arguments": args})
}

func (af *authzFixture) listZones(t *testing.T, key string) []string {
	t.Helper()
	res := af.call(t, key, "list_zones", map[string]any{"per_page": 50})
	if res.IsError {
		t.Fatalf("list_zones: %s", res.text())
	}
	var list dns.ZoneList
	if err := json.Unmarshal(res.StructuredContent, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, z := range list.Zones {
		names = append(names, z.Name)
	}
	slices.Sort(names)
	return names
}

func (af *authzFixture) id(name string) string { return strconv.FormatInt(af.zones[name].ID, 10) }

// TestTwoKeysOverHTTP: alice, delegated *.alice.example, can neither see
// in list_zones nor read, change or delete bob's zones; bob likewise; the
// admin can. Over HTTP with API keys, against the local store.
func TestTwoKeysOverHTTP(t *testing.T) {
	af := newAuthzFixture(t, backends[1], delegation, delegationEntities) // local
	for _, tc := range []struct {
		key, own, other string
		visible         []string
	}{
		{aliceKey, "shop.alice.example", "shop.bob.example", []string{"shop.alice.example", "xn--bcher-kva.alice.example"}},
		{bobKey, "shop.bob.example", "shop.alice.example", []string{"mail.bob.example", "shop.bob.example"}},
	} {
		if got := af.listZones(t, tc.key); !slices.Equal(got, tc.visible) {
			t.Errorf("list_zones shows %v, want %v", got, tc.visible)
		}
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"get_zone", map[string]any{"zone": tc.other}},
			{"export_zonefile", map[string]any{"zone": tc.other}},
			{"list_rrsets", map[string]any{"zone": tc.other}},
			{"get_rrset", map[string]any{"zone": tc.other, "name": "@", "type": "SOA"}},
			{"list_zone_actions", map[string]any{"zone": tc.other}},
			{"update_zone", map[string]any{"zone": tc.other, "labels": map[string]any{"x": "y"}}},
			{"create_rrset", map[string]any{"zone": tc.other, "name": "www", "type": "A", "records": []any{map[string]any{"value": "192.0.2.1"}}}},
			{"change_zone_ttl", map[string]any{"zone": tc.other, "ttl": 3600}},
			{"delete_zone", map[string]any{"zone": tc.other}},
			{"delete_zone", map[string]any{"zone": af.id(tc.other)}},
			{"delete_zone", map[string]any{"zone": strings.ToUpper(tc.other) + "."}},
			{"get_zone", map[string]any{"zone": "ghost." + strings.SplitN(tc.other, ".", 2)[1]}}, // absent: denied, not not_found
			{"create_zone", map[string]any{"name": "new." + strings.SplitN(tc.other, ".", 2)[1], "mode": "primary"}},
			{"get_zone", map[string]any{"zone": "example.org"}},
		} {
			res := af.call(t, tc.key, c.tool, c.args)
			if !res.IsError || res.code() != "permission_denied" {
				t.Errorf("%s %v: got %q %s, want permission_denied", c.tool, c.args, res.code(), res.text())
			}
		}
		if res := af.call(t, tc.key, "list_zone_actions", map[string]any{}); res.code() != "invalid_argument" {
			t.Errorf("list_zone_actions without a zone: %q, want invalid_argument", res.code())
		}
		if res := af.call(t, tc.key, "get_zone", map[string]any{"zone": strings.ToUpper(tc.own) + "."}); res.IsError {
			t.Errorf("own zone, other spelling: %s", res.text())
		}
		if res := af.call(t, tc.key, "get_zone", map[string]any{"zone": "ghost." + strings.SplitN(tc.own, ".", 2)[1]}); res.code() != "not_found" {
			t.Errorf("absent zone in own delegation: %q, want not_found", res.code())
		}
		if res := af.call(t, tc.key, "delete_zone", map[string]any{"zone": tc.own}); res.code() != "confirmation_required" {
			t.Errorf("own zone delete: %q, want the confirmation gate", res.code())
		}
	}
	if got := af.listZones(t, adminKey); len(got) != 5 {
		t.Errorf("admin sees %v, want all 5 zones", got)
	}
	for _, z := range []string{"shop.bob.example", "shop.alice.example", "example.org"} {
		if res := af.call(t, adminKey, "get_zone", map[string]any{"zone": z}); res.IsError {
			t.Errorf("admin get_zone %s: %s", z, res.text())
		}
	}
	// the bob's-zones deletion by alice left everything in place
	if got := af.listZones(t, adminKey); len(got) != 5 {
		t.Errorf("after the refused calls: %v", got)
	}
	// an action on bob's zone is bob's: alice cannot read it by id
	res := af.call(t, adminKey, "change_zone_ttl", map[string]any{"zone": "shop.bob.example", "ttl": 7200})
	var ar struct {
		Action struct {
			ID int64 `json:"id"`
		} `json:"action"`
	}
	if err := json.Unmarshal(res.StructuredContent, &ar); res.IsError || err != nil || ar.Action.ID == 0 {
		t.Fatalf("admin change_zone_ttl: %s", res.text())
	}
	for key, want := range map[string]string{aliceKey: "permission_denied", bobKey: "", adminKey: ""} {
		if got := af.call(t, key, "get_zone_action", map[string]any{"action_id": ar.Action.ID}); got.code() != want {
			t.Errorf("get_zone_action of bob's zone: %q, want %q (%s)", got.code(), want, got.text())
		}
	}
}

// TestDenialNamesPolicyNotText: a denial by a forbid names its id and
// never quotes the policy; the audit record carries decision and ids.
func TestDenialNamesPolicyNotText(t *testing.T) {
	policy := delegation + `@id("no-ns-edits") forbid(principal, action == Action::"create_rrset", resource) when { context.arguments.type == "NS" && "SECRET-MARKER" != "" };`
	af := newAuthzFixture(t, backends[1], policy, delegationEntities)
	res := af.call(t, adminKey, "create_rrset", map[string]any{"zone": "shop.bob.example", "name": "sub", "type": "NS", "records": []any{map[string]any{"value": "ns1.example.net."}}})
	if res.code() != "permission_denied" || !strings.Contains(res.text(), "no-ns-edits") || strings.Contains(res.text(), "SECRET-MARKER") || strings.Contains(res.text(), "forbid(") {
		t.Fatalf("denial: %q %s", res.code(), res.text())
	}
	var rec audit.Record
	for r := range af.audit {
		if r.Tool == "create_rrset" {
			rec = r
			break
		}
	}
	if rec.Authz != "deny" || !slices.Equal(rec.AuthzPolicies, []string{"no-ns-edits"}) || rec.ErrorCode != "permission_denied" {
		t.Fatalf("audit record: %+v", rec)
	}
}

// TestToolsListShowsWhatPolicyCouldAllow: a read-only group sees only the
// read tools.
func TestToolsListShowsWhatPolicyCouldAllow(t *testing.T) {
	af := newAuthzFixture(t, backends[1], `@id("readers") permit(principal == User::"alice", action in Action::"readOnly", resource);
@id("admins") permit(principal in Group::"admins", action, resource);`, delegationEntities)
	names := func(key string) []string {
		var out []string
		for _, tl := range af.rpc(t, key, "tools/list", map[string]any{}).Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	alice, bob, admin := names(aliceKey), names(bobKey), names(adminKey)
	if slices.Contains(alice, "delete_zone") || !slices.Contains(alice, "get_zone") || len(bob) != 0 || !slices.Contains(admin, "delete_zone") {
		t.Fatalf("alice %v\nbob %v\nadmin %v", alice, bob, admin)
	}
	for _, tl := range af.k.Tools() {
		if slices.Contains(alice, tl.Name()) && tl.Policy().ReadOnly != kernel.Yes {
			t.Errorf("alice is shown the write tool %s", tl.Name())
		}
	}
}

func dnsCreate(name string) dns.CreateZoneRequest {
	return dns.CreateZoneRequest{Name: name, Mode: dns.ModePrimary}
}

// TestAllowZonesBesidePolicy: HETZNER_ALLOW_ZONES keeps its refusal (and
// reads nothing outside the list) when a policy is in force; inside the
// list, the policy decides.
func TestAllowZonesBesidePolicy(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		dir := t.TempDir()
		pf := filepath.Join(dir, "p.cedar")
		if err := os.WriteFile(pf, []byte(`@id("all-but-delete") permit(principal, action, resource) unless { action == Action::"delete_zone" };`), 0o600); err != nil {
			t.Fatal(err)
		}
		zones := []string{"alice-shop.com", "bob-shop.com"}
		var ids []int64
		f := newFixture(t, mk, setup{cfg: dns.Config{AllowZones: []string{"alice-shop.com"}},
			kopts: kernel.Options{Authz: &authz.Config{PolicyFile: pf}},
			before: func(b backend) {
				for _, n := range zones {
					z, _, err := b.p.CreateZone(t.Context(), dnsCreate(n))
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, z.ID)
				}
			}})
		f.ok(t, "get_zone", map[string]any{"zone": "alice-shop.com"}, nil)
		for _, z := range []any{"bob-shop.com", strconv.FormatInt(ids[1], 10), "absent.com"} {
			if txt := f.fails(t, "get_zone", map[string]any{"zone": z}, kernel.PermissionDenied); !strings.Contains(txt, "not available to this server") {
				t.Errorf("%v: %s, want the allowlist's refusal", z, txt)
			}
		}
		if txt := f.fails(t, "delete_zone", map[string]any{"zone": "alice-shop.com"}, kernel.PermissionDenied); !strings.Contains(txt, "authorization policy") {
			t.Errorf("delete inside the list: %s, want the policy's refusal", txt)
		}
		var list dns.ZoneList
		f.ok(t, "list_zones", map[string]any{}, &list)
		if len(list.Zones) != 1 || list.Zones[0].Name != "alice-shop.com" {
			t.Errorf("list_zones: %+v", list.Zones)
		}
	})
}

// TestReloadUnderLoadOverHTTP: while alice keeps calling over HTTP, the
// policy file is swapped between two sets and broken in between; every
// denial names both forbids of one set (never one of each), and a broken
// file changes nothing.
func TestReloadUnderLoadOverHTTP(t *testing.T) {
	set := func(tag string) string {
		return delegation + `@id("` + tag + `1") forbid(principal == User::"alice", action == Action::"get_zone", resource);
@id("` + tag + `2") forbid(principal == User::"alice", action == Action::"get_zone", resource);
`
	}
	af := newAuthzFixture(t, backends[1], set("a"), delegationEntities)
	path := af.policyFile
	stop := make(chan struct{})
	done := make(chan []string)
	go func() {
		var bad []string
		for {
			select {
			case <-stop:
				done <- bad
				return
			default:
			}
			txt := af.call(t, aliceKey, "get_zone", map[string]any{"zone": "shop.alice.example"}).text()
			if !strings.Contains(txt, "policy a1, a2") && !strings.Contains(txt, "policy b1, b2") {
				bad = append(bad, txt)
			}
		}
	}()
	for i := range 20 {
		tag := "b"
		if i%2 == 1 {
			tag = "a"
		}
		if err := os.WriteFile(path, []byte(set(tag)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := af.k.Authorizer().Reload(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("forbid(principal"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := af.k.Authorizer().Reload(); err == nil {
			t.Fatal("a broken file was accepted")
		}
		if txt := af.call(t, aliceKey, "get_zone", map[string]any{"zone": "shop.alice.example"}).text(); !strings.Contains(txt, "policy "+tag+"1, "+tag+"2") {
			t.Fatalf("after a broken file: %s, want the set %s", txt, tag)
		}
	}
	close(stop)
	if bad := <-done; len(bad) > 0 {
		t.Fatalf("%d answer(s) from a mixed or missing set, e.g. %s", len(bad), bad[0])
	}
}

// TestListZonesCountsOnlyPermitted: under a policy, list_zones counts and
// pages only the zones the caller may see — total_entries, last_page and
// every page — on both providers; a hidden zone is never counted, so its
// existence does not leak through the totals.
func TestListZonesCountsOnlyPermitted(t *testing.T) {
	for _, mk := range backends {
		t.Run(mk.name, func(t *testing.T) {
			// names both providers accept (Hetzner takes registrable domains only)
			policy := `
@id("alice-zones") permit(principal == User::"alice", action, resource is Dns::Zone) when { resource.zone like "alice-*" };
@id("bob-zones") permit(principal == User::"bob", action, resource is Dns::Zone) when { resource.zone like "bob-*" };
@id("listing") permit(principal, action == Action::"list_zones", resource is Server);
@id("admins") permit(principal in Group::"admins", action, resource);`
			af := newAuthzFixture(t, mk, policy, delegationEntities, "alice-shop.com", "xn--alice-bcher-zob.com", "alice-mail.com", "bob-shop.com", "bob-mail.com", "other.org")
			page := func(key string, n int, args map[string]any) dns.ZoneList {
				t.Helper()
				a := map[string]any{"per_page": 1, "page": n}
				for k, v := range args {
					a[k] = v
				}
				res := af.call(t, key, "list_zones", a)
				var list dns.ZoneList
				if err := json.Unmarshal(res.StructuredContent, &list); res.IsError || err != nil {
					t.Fatalf("list_zones: %s", res.text())
				}
				return list
			}
			for _, tc := range []struct {
				key  string
				args map[string]any
				want []string // every permitted zone matching args, in name order
			}{
				{aliceKey, nil, []string{"alice-mail.com", "alice-shop.com"}},
				{bobKey, map[string]any{"sort": []string{"name:asc"}}, []string{"bob-mail.com", "bob-shop.com"}},
				{aliceKey, map[string]any{"name": "bob-shop.com"}, nil},
				{aliceKey, map[string]any{"name": "alice-shop.com"}, []string{"alice-shop.com"}},
				{adminKey, map[string]any{"sort": []string{"name:desc"}}, []string{"alice-mail.com", "alice-shop.com", "bob-mail.com", "bob-shop.com", "other.org", "xn--alice-bcher-zob.com"}},
			} {
				first := page(tc.key, 1, tc.args)
				if p := first.Pagination; p.TotalEntries == nil || *p.TotalEntries != len(tc.want) || p.LastPage == nil || *p.LastPage != max(1, len(tc.want)) {
					t.Errorf("%v: pagination %+v, want %d entries", tc.args, describePagination(p), len(tc.want))
				}
				var seen []string
				for n := 1; n <= len(tc.want)+1; n++ {
					for _, z := range page(tc.key, n, tc.args).Zones {
						seen = append(seen, z.Name)
					}
				}
				slices.Sort(seen)
				if want := slices.Sorted(slices.Values(tc.want)); !slices.Equal(seen, want) {
					t.Errorf("%v: pages hold %v, want %v", tc.args, seen, want)
				}
			}
		})
	}
}

func describePagination(p dns.Pagination) string {
	s := func(v *int) string {
		if v == nil {
			return "nil"
		}
		return strconv.Itoa(*v)
	}
	return "page " + strconv.Itoa(p.Page) + " last " + s(p.LastPage) + " total " + s(p.TotalEntries) + " next " + s(p.NextPage)
}
