package rfc2136_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/rfc2136"
)

// servedTools are the tools an RFC 2136 server serves.
var servedTools = []string{"list_zones", "get_zone", "export_zonefile", "list_rrsets", "get_rrset", "create_rrset",
	"delete_rrset", "set_records", "add_records", "remove_records", "change_rrset_ttl"}

// runSuite calls every tool the provider serves through the MCP protocol
// and checks each change against the server's own answers.
func runSuite(t *testing.T, tg target) {
	p := newProvider(t, tg.addr, testKey(t), nil)
	c := &client{t: t, s: session(t, p)}
	res, err := c.s.ListTools(ctx(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if slices.Sort(names); !slices.Equal(names, slices.Sorted(slices.Values(servedTools))) {
		t.Fatalf("tools/list %v", names)
	}
	want := func(name, typ string, ttl uint32, values ...string) {
		t.Helper()
		got, gotTTL := tg.lookup(t, name, typ)
		slices.Sort(values)
		if !slices.Equal(got, values) || len(values) > 0 && ttl != 0 && gotTTL != ttl {
			t.Fatalf("%s %s: the server answers %v (TTL %d), want %v (TTL %d)", name, typ, got, gotTTL, values, ttl)
		}
	}
	t.Run("reads", func(t *testing.T) { c.t = t; suiteReads(c) })
	t.Run("writes", func(t *testing.T) { c.t = t; suiteWrites(c, want) })
	t.Run("conflict", func(t *testing.T) {
		c.t = t
		args := recordsArgs("www", "A", "203.0.113.1")
		tok := mcptest.ConfirmToken(t, c.s.Call(t, "set_records", args))
		rfc2136.SetAfterRead(p, func() { tg.replace(t, "www", "A", "203.0.113.66") })
		text := c.fails("set_records", with(args, "confirmToken", tok), kernel.Conflict)
		rfc2136.SetAfterRead(p, nil)
		if !strings.Contains(text, "changed on the server since it was read") {
			t.Fatalf("conflict text: %s", text)
		}
		want("www", "A", 0, "203.0.113.66") // the other client's change stands
	})
}

func suiteReads(c *client) {
	var zones dns.ZoneList
	c.ok("list_zones", map[string]any{}, &zones)
	if len(zones.Zones) != 1 || zones.Zones[0].Name != zone || zones.Zones[0].RecordCount < 9 || zones.Zones[0].Mode != dns.ModePrimary {
		c.t.Fatalf("list_zones: %+v", zones)
	}
	var z struct{ Zone dns.Zone }
	c.ok("get_zone", map[string]any{"zone": zone}, &z)
	if z.Zone.AuthoritativeNameservers == nil || len(z.Zone.AuthoritativeNameservers.Assigned) != 2 {
		c.t.Fatalf("get_zone: %+v", z.Zone)
	}
	text := c.ok("export_zonefile", map[string]any{"zone": zone}, nil)
	for _, w := range []string{`<untrusted-data source="dns-server">`, "SOA", "198.51.100.1", "v=spf1 -all"} {
		if !strings.Contains(text, w) {
			c.t.Fatalf("export lacks %q:\n%s", w, text)
		}
	}
	var list dns.RRSetList
	c.ok("list_rrsets", map[string]any{"zone": zone, "type": []any{"A"}, "sort": []any{"name"}}, &list)
	if len(list.RRSets) != 3 || list.RRSets[2].ID != "www/A" {
		c.t.Fatalf("list_rrsets: %+v", list.RRSets)
	}
	var rs struct{ RRSet dns.RRSet }
	c.ok("get_rrset", map[string]any{"zone": zone, "name": "www", "type": "A"}, &rs)
	if len(rs.RRSet.Records) != 2 || rs.RRSet.TTL == nil || *rs.RRSet.TTL != 300 {
		c.t.Fatalf("get_rrset: %+v", rs.RRSet)
	}
	c.fails("get_rrset", map[string]any{"zone": zone, "name": "absent", "type": "A"}, kernel.NotFound)
	c.fails("get_zone", map[string]any{"zone": "other.org"}, kernel.NotFound)
	c.fails("list_rrsets", map[string]any{"zone": zone, "label_selector": "a=b"}, kernel.InvalidArgument)
}

func suiteWrites(c *client, want func(name, typ string, ttl uint32, values ...string)) {
	c.ok("create_rrset", map[string]any{"zone": zone, "name": "api", "type": "A", "ttl": 120, "records": recs("198.51.100.10")}, nil)
	want("api", "A", 120, "198.51.100.10")
	c.fails("create_rrset", map[string]any{"zone": zone, "name": "api", "type": "A", "records": recs("198.51.100.12")}, kernel.AlreadyExists)
	c.ok("add_records", map[string]any{"zone": zone, "name": "api", "type": "A", "records": recs("198.51.100.11", "198.51.100.10")}, nil)
	want("api", "A", 120, "198.51.100.10", "198.51.100.11")
	c.ok("add_records", map[string]any{"zone": zone, "name": "new", "type": "TXT", "records": recs(`"hello world"`)}, nil)
	want("new", "TXT", rfc2136.DefaultTTL, `"hello world"`)
	c.confirmed("set_records", recordsArgs("www", "A", "198.51.100.9"))
	want("www", "A", 300, "198.51.100.9")
	c.confirmed("remove_records", recordsArgs("api", "A", "198.51.100.10"))
	want("api", "A", 120, "198.51.100.11")
	tok := mcptest.ConfirmToken(c.t, c.s.Call(c.t, "remove_records", recordsArgs("api", "A", "198.51.100.99")))
	c.fails("remove_records", with(recordsArgs("api", "A", "198.51.100.99"), "confirmToken", tok), kernel.InvalidArgument)
	c.ok("change_rrset_ttl", map[string]any{"zone": zone, "name": "www", "type": "A", "ttl": 900}, nil)
	want("www", "A", 900, "198.51.100.9")
	c.fails("change_rrset_ttl", map[string]any{"zone": zone, "name": "www", "type": "A", "ttl": nil}, kernel.InvalidArgument)
	c.ok("change_rrset_ttl", map[string]any{"zone": zone, "name": "@", "type": "NS", "ttl": 7200}, nil)
	want("@", "NS", 7200, "ns1.example.com.", "ns2.example.com.")
	c.ok("create_rrset", map[string]any{"zone": zone, "name": "alias", "type": "CNAME", "records": recs("www")}, nil)
	want("alias", "CNAME", 0, "www.example.com.")
	c.fails("add_records", map[string]any{"zone": zone, "name": "alias", "type": "A", "records": recs("198.51.100.3")}, kernel.InvalidArgument)
	c.fails("create_rrset", map[string]any{"zone": zone, "name": "www", "type": "CNAME", "records": recs("api")}, kernel.InvalidArgument)
	c.ok("add_records", map[string]any{"zone": zone, "name": "@", "type": "MX", "records": recs("20 backup.example.org.")}, nil)
	want("@", "MX", 600, "10 mail.example.com.", "20 backup.example.org.")
	c.confirmed("delete_rrset", map[string]any{"zone": zone, "name": "api", "type": "A"})
	want("api", "A", 0)
	c.fails("add_records", map[string]any{"zone": zone, "name": "x", "type": "A", "records": []any{map[string]any{"value": "198.51.100.3", "comment": "c"}}}, kernel.InvalidArgument)
	var rs struct{ RRSet dns.RRSet }
	c.ok("get_rrset", map[string]any{"zone": zone, "name": "www", "type": "A"}, &rs)
	if len(rs.RRSet.Records) != 1 || *rs.RRSet.TTL != 900 {
		c.t.Fatalf("get_rrset after the changes: %+v", rs.RRSet)
	}
}

// client calls tools and checks their answers.
type client struct {
	t *testing.T
	s *mcptest.Session
}

func (c *client) ok(tool string, args map[string]any, out any) string {
	c.t.Helper()
	res := c.s.Call(c.t, tool, args)
	if res.IsError {
		c.t.Fatalf("%s %v: %s", tool, args, mcptest.Text(res))
	}
	if out != nil {
		mcptest.Structured(c.t, res, out)
	}
	return mcptest.Text(res)
}

func (c *client) fails(tool string, args map[string]any, code kernel.Code) string {
	c.t.Helper()
	res := c.s.Call(c.t, tool, args)
	text := mcptest.Text(res)
	var s struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if res.IsError {
		mcptest.Structured(c.t, res, &s)
	}
	if !res.IsError || s.Error.Code != string(code) {
		c.t.Fatalf("%s %v: want %s, got %s", tool, args, code, text)
	}
	return text
}

// confirmed calls a gated tool, then again with the token it gave.
func (c *client) confirmed(tool string, args map[string]any) string {
	c.t.Helper()
	tok := mcptest.ConfirmToken(c.t, c.s.Call(c.t, tool, args))
	return c.ok(tool, with(args, "confirmToken", tok), nil)
}

func recordsArgs(name, typ string, values ...string) map[string]any {
	return map[string]any{"zone": zone, "name": name, "type": typ, "records": recs(values...)}
}

func recs(values ...string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = map[string]any{"value": v}
	}
	return out
}

func with(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestSuiteFake runs the tool suite against the fake server.
func TestSuiteFake(t *testing.T) {
	tg, _ := fakeTarget(t)
	runSuite(t, tg)
}
