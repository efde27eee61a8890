package authz

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Decide is held to cedar.Authorize on the whole request: random policy
// sets, written as Cedar text and parsed by cedar-go without the schema
// check (so that type errors, missing attributes and overflows happen),
// decide random requests, and Decide — the policies cut by partial
// evaluation per tool and principal, the context cut to what they read,
// cached entities, the memo — must give the decision, deciding policies
// and erroring policies that cedar.Authorize gives with every policy of the
// set on the whole request (reference).

// policyGen writes Cedar text from a stream of choices.
type policyGen struct {
	b     []byte
	depth int
}

func (g *policyGen) pick(n int) int {
	if len(g.b) == 0 {
		return 0
	}
	x := int(g.b[0]) % n
	g.b = g.b[1:]
	return x
}

func (g *policyGen) of(xs ...string) string { return xs[g.pick(len(xs))] }

var (
	genStrings = []string{`""`, `"a.example"`, `"x.a.example"`, `"NS"`, `"A"`, `"ops"`, `"gold"`, `"ünï\u{202e}"`, `"*"`, `"ticket-7"`, `"dns"`, `"alice"`}
	genLongs   = []string{"0", "1", "300", "60", "9223372036854775807", "-9223372036854775807", "4611686018427387904", "3037000500", "-1",
		"1700000000", "1700000001", "-3", "9007199254740992"}
	genSets = []string{`[]`, `["A", "NS"]`, `[Group::"ops", Group::"team"]`, `[Group::"cyc2", "ops"]`, `[1, 300, 1]`, `["ops", 1]`, `[[1], [2]]`,
		`["a", "example"]`, `["x", "a", "example"]`, `[""]`, `["dns:read"]`, `[Action::"readOnly"]`, `[User::"alice", Dns::Zone::"a.example"]`, `[-3, 0]`}
	genEntity = []string{`User::"alice"`, `User::"bob"`, `User::""`, `Group::"ops"`, `Group::"team"`, `Group::"agents"`, `Group::"cyc1"`,
		`Dns::Zone::"a.example"`, `Dns::Zone::"x.a.example"`, `Server::"dns"`, `Action::"readOnly"`, `Action::"write"`,
		`Action::"destructive"`, `Action::"get_zone"`, `Action::"set_records"`, `Nope::"x"`}
	genPatterns = []string{`"*"`, `""`, `"*.a.example"`, `"a*"`, `"*a*a*a*b"`, `"\*"`, `"*\**"`, `"ü*"`, `"x.*.example"`, `"***"`, `"ticket-*"`, `"N?"`}
	genAttrs    = []string{"principal.plan", "principal.auth", "principal.groups", "principal.scopes", "principal.nope",
		"resource.zone", "resource.id", "resource.nameLabels", "resource.serial", "resource.signed", "resource.name", "resource.nope",
		"context.transport", "context.confirmed", "context.time", "context.arguments", "context.nope",
		"context.arguments.zone", "context.arguments.type", "context.arguments.ttl", "context.arguments.values",
		"context.arguments.comment", "context.arguments.flag", "context.arguments.opts", "context.arguments.opts.n",
		"context.arguments.opts.tags", "context.arguments.nums", "context.arguments.items", "context.arguments.nope",
		"action.readOnly", `User::"alice".plan`, `Group::"ops".x`, `Dns::Zone::"a.example".zone`}
	genHas = []string{"principal", "resource", "context", "context.arguments", "context.arguments.opts", "action", `Nope::"x"`, `User::"alice"`, "principal.plan"}
	// extension functions, records, tags
	genOther = []string{`ip("127.0.0.1").isLoopback()`, `decimal("1.5").lessThan(decimal("2.0"))`, `{a: 1} == {a: 1}`,
		`principal.hasTag("x")`, `context == {transport: "http"}`, `context.arguments == context.arguments`}
)

// expr is an expression of any type; the typed productions below pick a
// wrong type now and then, so that type errors happen too.
func (g *policyGen) expr() string {
	switch g.pick(6) {
	case 0:
		return g.long()
	case 1:
		return g.str()
	case 2:
		return g.entity()
	case 3:
		return g.set()
	case 4:
		return g.of(genAttrs...)
	}
	return g.bool()
}

// deeper reports whether an expression may nest further; wrong whether it
// takes an expression of any type instead of the one asked for.
func (g *policyGen) deeper() bool { return g.depth < 4 && len(g.b) > 0 }
func (g *policyGen) wrong() bool  { return g.pick(14) == 0 }

func (g *policyGen) nest(f func() string) string {
	g.depth++
	defer func() { g.depth-- }()
	if g.wrong() && g.depth < 4 {
		return g.expr()
	}
	return f()
}

func (g *policyGen) bool() string {
	if !g.deeper() {
		return g.of("true", "false", "context.confirmed", "resource.signed", "context.arguments.flag")
	}
	return g.nest(func() string {
		switch g.pick(19) {
		case 0:
			return "(" + g.long() + " " + g.of("<", "<=", ">", ">=") + " " + g.long() + ")"
		case 1:
			return "(" + g.str() + " " + g.of("==", "!=") + " " + g.str() + ")"
		case 2:
			return "(" + g.long() + " " + g.of("==", "!=") + " " + g.long() + ")"
		case 3:
			return "(" + g.expr() + " " + g.of("==", "!=") + " " + g.expr() + ")"
		case 4:
			return "(" + g.str() + " like " + g.of(genPatterns...) + ")"
		case 5:
			return "(" + g.of(genHas...) + " has " + g.of("plan", "groups", "zone", "serial", "name", "ttl", "comment", "opts", "n", "tags", "arguments", "transport", "flag", "nope", "readOnly") + ")"
		case 6:
			return "(" + g.entity() + " in " + g.of(g.entity(), g.set()) + ")"
		case 7:
			return "(" + g.entity() + " is " + g.of("User", "Group", "Dns::Zone", "Server", "Action") + ")"
		case 8:
			return "(" + g.entity() + " is " + g.of("User", "Dns::Zone", "Action", "Group") + " in " + g.of(g.entity(), g.set()) + ")"
		case 9:
			return "(" + g.set() + ").contains(" + g.expr() + ")"
		case 10:
			return "(" + g.set() + ")." + g.of("containsAll", "containsAny") + "(" + g.set() + ")"
		case 11:
			return "(" + g.set() + ").isEmpty()"
		case 12, 13:
			return "(" + g.bool() + " " + g.of("&&", "||") + " " + g.bool() + ")"
		case 14:
			return "(!" + g.bool() + ")"
		case 15:
			return "(if " + g.bool() + " then " + g.bool() + " else " + g.bool() + ")"
		case 16:
			return "(" + g.of("principal", "action", `Group::"team"`, `Group::"cyc1"`, `User::"alice"`, `Action::"destructive"`) + " in " +
				g.of(`Group::"agents"`, `Group::"ops"`, `Group::"cyc2"`, `Action::"write"`, `[Group::"agents", "x"]`, `[Group::"cyc2", 1]`, `[Action::"readOnly", Group::"team"]`) + ")"
		case 17:
			if g.pick(3) == 0 {
				return g.of(genOther...)
			}
		}
		return g.of("true", "false", "context.confirmed", "resource.signed", "context.arguments.flag")
	})
}

func (g *policyGen) long() string {
	if !g.deeper() {
		return g.of(genLongs...)
	}
	return g.nest(func() string {
		switch g.pick(7) {
		case 0, 1:
			return "(" + g.long() + " " + g.of("+", "-", "*") + " " + g.long() + ")"
		case 2:
			return "(-" + g.long() + ")"
		case 3:
			return g.of("context.time", "context.arguments.ttl", "resource.serial", "context.arguments.opts.n")
		case 4:
			return "(if " + g.bool() + " then " + g.long() + " else " + g.long() + ")"
		}
		return g.of(genLongs...)
	})
}

func (g *policyGen) str() string {
	if !g.deeper() {
		return g.of(genStrings...)
	}
	return g.nest(func() string {
		switch g.pick(4) {
		case 0, 1:
			return g.of("principal.plan", "principal.auth", "resource.zone", "resource.id", "resource.name", "context.transport",
				"context.arguments.zone", "context.arguments.type", "context.arguments.comment")
		case 2:
			return "(if " + g.bool() + " then " + g.str() + " else " + g.str() + ")"
		}
		return g.of(genStrings...)
	})
}

func (g *policyGen) entity() string {
	if !g.deeper() {
		return g.of("principal", "action", "resource")
	}
	return g.nest(func() string {
		switch g.pick(3) {
		case 0:
			return g.of("principal", "action", "resource")
		case 1:
			return "(if " + g.bool() + " then " + g.entity() + " else " + g.entity() + ")"
		}
		return g.of(genEntity...)
	})
}

func (g *policyGen) set() string {
	if !g.deeper() {
		return g.of(genSets...)
	}
	return g.nest(func() string {
		switch g.pick(5) {
		case 0:
			return g.of("principal.groups", "principal.scopes", "resource.nameLabels", "context.arguments.values",
				"context.arguments.nums", "context.arguments.items", "context.arguments.opts.tags")
		case 1:
			return "[" + g.expr() + ", " + g.expr() + "]"
		case 2:
			return "(if " + g.bool() + " then " + g.set() + " else " + g.set() + ")"
		}
		return g.of(genSets...)
	})
}

func (g *policyGen) policy(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@id(\"p%d\") %s(", i, g.of("permit", "forbid", "permit"))
	b.WriteString(g.of("principal", "principal", `principal == User::"alice"`, `principal in Group::"ops"`, `principal is User`,
		`principal is User in Group::"agents"`, `principal == User::""`) + ", ")
	b.WriteString(g.of("action", "action", `action == Action::"get_zone"`, `action in Action::"readOnly"`,
		`action in [Action::"set_records", Action::"write"]`, `action in Action::"destructive"`) + ", ")
	b.WriteString(g.of("resource", "resource", "resource is Dns::Zone", `resource == Dns::Zone::"a.example"`,
		`resource in Dns::Zone::"a.example"`, "resource is Server") + ")")
	for range g.pick(3) {
		fmt.Fprintf(&b, " %s { %s }", g.of("when", "unless"), g.bool())
	}
	b.WriteString(";\n")
	return b.String()
}

func (g *policyGen) policies() string {
	var b strings.Builder
	for i := range 1 + g.pick(4) {
		b.WriteString(g.policy(i))
	}
	return b.String()
}

type fuzzArgs struct {
	Zone    string   `json:"zone"`
	Type    string   `json:"type"`
	TTL     *int     `json:"ttl,omitempty"`
	Values  []string `json:"values"`
	Comment string   `json:"comment,omitempty"`
	Flag    *bool    `json:"flag,omitempty"`
	Opts    *struct {
		N    int      `json:"n"`
		Tags []string `json:"tags,omitempty"`
	} `json:"opts,omitempty"`
	Nums  []int `json:"nums,omitempty"`
	Items []struct {
		K string `json:"k"`
	} `json:"items,omitempty"`
}

const fuzzEntities = `[
{"uid": {"type": "User", "id": "alice"}, "parents": [{"type": "Group", "id": "team"}], "attrs": {}},
{"uid": {"type": "Group", "id": "team"}, "parents": [{"type": "Group", "id": "ops"}], "attrs": {}},
{"uid": {"type": "Group", "id": "ops"}, "parents": [{"type": "Group", "id": "agents"}], "attrs": {}},
{"uid": {"type": "Group", "id": "cyc1"}, "parents": [{"type": "Group", "id": "cyc2"}], "attrs": {}},
{"uid": {"type": "Group", "id": "cyc2"}, "parents": [{"type": "Group", "id": "cyc1"}, {"type": "Group", "id": "agents"}], "attrs": {}}]`

func fuzzModel(t testing.TB) *Model {
	s, err := jsonschema.For[fuzzArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	zone := ResourceType{Name: "Dns::Zone", Attrs: map[string]AttrType{"zone": String, "id": String, "nameLabels": StringSet, "serial": Long, "signed": Bool}}
	return &Model{Server: "dns", Resources: []ResourceType{zone}, Actions: []Action{
		{Name: "get_zone", ReadOnly: true, Targets: []string{"Dns::Zone"}, Arguments: s},
		{Name: "set_records", Destructive: true, Targets: []string{"Dns::Zone"}, Arguments: s},
		{Name: "create_zone", Targets: []string{"Dns::Zone"}, Arguments: s},
		{Name: "list_zones", ReadOnly: true, Arguments: s},
		{Name: "label_zone", Targets: []string{"Dns::Zone"}, Arguments: fixedArgsSchema(t)},
	}}
}

// fixedArgs are the arguments of a tool with only strings, booleans and
// arrays of strings.
type fixedArgs struct {
	Zone    string   `json:"zone"`
	Type    string   `json:"type"`
	Values  []string `json:"values"`
	Comment string   `json:"comment,omitempty"`
	Flag    *bool    `json:"flag,omitempty"`
}

func fixedArgsSchema(t testing.TB) *jsonschema.Schema {
	s, err := jsonschema.For[fixedArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	fuzzPrincipals = []Principal{{ID: "alice", Plan: "gold", Auth: "apikey"}, {ID: "bob", Groups: []string{"ops", "ops"}, Scopes: []string{"dns:read", "dns:read"}},
		{ID: "", Auth: "none"}, {ID: "ünï", Plan: "", Groups: []string{"cyc1"}, Scopes: []string{""}}, {ID: "carol", Groups: []string{"team", "nope"}, Plan: "ops"}}
	fuzzResources = []Resource{{},
		{Type: "Dns::Zone", ID: "a.example", Attrs: map[string]any{"zone": "a.example", "id": "1", "nameLabels": []string{"a", "example"}, "serial": int64(1 << 62), "signed": true}},
		{Type: "Dns::Zone", ID: "x.a.example", Attrs: map[string]any{"zone": "x.a.example", "id": "", "nameLabels": []string{"x", "a", "example", "a"}, "serial": 60, "signed": false}},
		{Type: "Dns::Zone", ID: "ünï\u202e", Attrs: map[string]any{"zone": "ünï\u202e", "id": "*", "nameLabels": []string{}, "serial": int64(-1 << 63), "signed": false}},
		{Type: "Dns::Zone", ID: "", Attrs: map[string]any{"zone": "", "id": "", "nameLabels": []string{""}, "serial": int64(1<<63 - 1), "signed": true}},
	}
	fuzzArguments = []map[string]any{
		{"zone": "a.example", "type": "A", "values": []any{}},
		{"zone": "x.a.example", "type": "NS", "values": []any{"a", "a", ""}, "ttl": 60.0, "comment": "ticket-7"},
		{"zone": "ünï\u202e", "type": "", "values": []any{"ops"}, "ttl": 9007199254740992.0, "flag": true, "opts": map[string]any{"n": -3.0, "tags": []any{"x"}}},
		{"zone": "", "type": "A", "values": []any{}, "ttl": -9007199254740992.0, "opts": map[string]any{"n": 0.0}, "nums": []any{1.0, 300.0, 1.0}, "items": []any{map[string]any{"k": "v"}}},
		{"zone": "a", "type": "A", "values": []any{}, "ttl": nil, "flag": nil, "comment": strings.Repeat("a", 300) + "b"},
		{"zone": 3.0, "type": "A", "values": []any{}},             // does not fit
		{"zone": "a", "type": "A", "values": []any{}, "ttl": 1.5}, // does not fit
		{"zone": "a", "type": "A"}, // a required argument missing
		{"zone": "a", "type": "A", "values": []any{}, "ttl": 1e300},
		{"zone": "x.a.example", "type": "NS", "values": []any{"a", ""}, "comment": "ticket-7", "flag": true}, // fixedArgs
		{"zone": "", "type": "", "values": []any{}, "flag": false},
	}
	fuzzTools = []string{"get_zone", "set_records", "create_zone", "list_zones", "label_zone"}
)

func (g *policyGen) request() Request {
	r := Request{Principal: fuzzPrincipals[g.pick(len(fuzzPrincipals))], Action: fuzzTools[g.pick(len(fuzzTools))],
		Arguments: fuzzArguments[g.pick(len(fuzzArguments))], Transport: g.of("http", "stdio", ""), Confirmed: g.pick(2) == 0,
		Time: time.Unix([]int64{0, 1_700_000_000, 1 << 62, -5}[g.pick(4)], 0)}
	if r.Action != "list_zones" {
		i := 1 + g.pick(len(fuzzResources)-1)
		r.Resource = fuzzResources[i]
		if g.pick(2) == 0 { // as a resolver's ResourceCache hands it out
			r.Resource = fuzzResourceCache.Get(strconv.Itoa(i), 0, func(string, int64) Resource { return fuzzResources[i] })
		}
	}
	return r
}

// fuzzResourceCache holds fuzzResources by index.
var fuzzResourceCache ResourceCache

// checkDecide decides requests drawn from g with p and compares each with
// Cedar's answer on the whole request with every policy.
func checkDecide(t testing.TB, p *Policies, g *policyGen, text string) (allowed int) {
	for range 6 {
		r := g.request()
		got, want := p.Decide(r), p.reference(nil, r)
		if got.Allow != want.Allow || !slices.Equal(got.Policies, want.Policies) || !slices.Equal(got.Errors, want.Errors) {
			t.Fatalf("policies:\n%s\nrequest %+v:\nDecide    %+v\nreference %+v", text, r, got, want)
		}
		if got.Allow {
			allowed++
		}
	}
	return allowed
}

// TestDecideMatchesCedar: many random policy sets, every request decided
// as cedar-go decides it on the whole request with every policy.
func TestDecideMatchesCedar(t *testing.T) {
	m := fuzzModel(t)
	rng := rand.New(rand.NewPCG(11, 12))
	allowed, parsed := 0, 0
	n := 4000
	if testing.Short() || raceEnabled {
		n = 800
	}
	for range n {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		g := &policyGen{b: b}
		text := g.policies()
		p, err := parse(m, "gen.cedar", []byte(text), []byte(fuzzEntities), false)
		if err != nil {
			continue
		}
		parsed++
		allowed += checkDecide(t, p, g, text)
	}
	t.Logf("%d sets parsed, %d of %d requests allowed", parsed, allowed, 6*parsed)
	if parsed < n/2 || allowed < parsed/4 {
		t.Fatalf("too little coverage: %d sets parsed, %d requests allowed", parsed, allowed)
	}
}

// FuzzDecideMatchesCedar: the same, from fuzzed choices.
func FuzzDecideMatchesCedar(f *testing.F) {
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Add([]byte("\x03\x0a\x13\x05\x01\x02\x0b\x0e\x0c\x09\x11\x12\x07\x06"))
	f.Add([]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef\xee"))
	m := fuzzModel(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &policyGen{b: b}
		text := g.policies()
		p, err := parse(m, "gen.cedar", []byte(text), []byte(fuzzEntities), false)
		if err != nil {
			return
		}
		checkDecide(t, p, g, text)
	})
}
