package authz

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// errInvalid reports a policy or entities file that does not parse or does
// not fit the schema the kernel generated from the registered tools.
var errInvalid = errors.New("authz: invalid policy")

// maxFileSize bounds a policy or entities file.
const maxFileSize = 4 << 20

// Policies is one loaded, validated policy set with its entities. It is
// immutable: a reload builds a new one and swaps it in whole.
type Policies struct {
	model    *Model
	set      *cedar.PolicySet
	plans    map[string]*plan // per tool: what a decision needs, built at load
	planList []*plan          // the same, in the order of the model's Actions (Request.ActionIndex)
	ids      []string
	entities types.EntityMap // groups, users' group memberships, actions
	resTypes map[string]ResourceType
	server   types.Entity

	principals cache[string, *principalEntry] // built once per principal
	// lastPrincipal is the entry Decide last used: a caller's next
	// request finds it by comparing principals, without the key.
	lastPrincipal atomic.Pointer[principalEntry]
	resources     cache[types.EntityUID, *resEntry] // built once per resource and attributes
	memo          *memo                             // recent decisions: pure functions of their key
	attrNames     map[string][]string               // per resource type, sorted
	attrLists     map[string]*attrList              // per resource type, for the compiled path
}

type attrDecl struct {
	name string
	t    AttrType
}

// attrList is a resource type's attributes, sorted by name.
type attrList struct {
	name  string // the type's
	names []string
	types []AttrType
	decl  []attrDecl // names and types side by side, for loadAttrs
	attrs map[string]AttrType
}

// Parse parses and validates a policy file (Cedar text) and an optional
// entities file (Cedar JSON entities: User and Group entities with parents
// only). name is the policy file's name, for error positions.
func Parse(m *Model, name string, policy, entities []byte) (*Policies, error) {
	return parse(m, name, policy, entities, true)
}

// parse is Parse; validate false skips the schema check (tests hold the
// compiled evaluator to Cedar on policies that do not type-check).
func parse(m *Model, name string, policy, entities []byte, validate bool) (*Policies, error) {
	args, err := m.prepare()
	if err != nil {
		return nil, err
	}
	v, err := validator(m.schema(args))
	if err != nil {
		return nil, fmt.Errorf("%w: the generated schema: %w", errModel, err)
	}
	if len(policy) > maxFileSize || len(entities) > maxFileSize {
		return nil, fmt.Errorf("%w: a file is larger than %d bytes", errInvalid, maxFileSize)
	}
	list, err := cedar.NewPolicyListFromBytes(name, policy)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errInvalid, name, err)
	}
	p := &Policies{model: m, set: cedar.NewPolicySet(), resTypes: map[string]ResourceType{}, memo: newMemo(), attrNames: map[string][]string{}}
	p.attrLists = map[string]*attrList{}
	for _, rt := range m.Resources {
		p.resTypes[rt.Name] = rt
		p.attrNames[rt.Name] = slices.Sorted(maps.Keys(rt.Attrs))
		al := &attrList{name: rt.Name, names: p.attrNames[rt.Name], attrs: rt.Attrs}
		for _, n := range al.names {
			al.types = append(al.types, rt.Attrs[n])
			al.decl = append(al.decl, attrDecl{n, rt.Attrs[n]})
		}
		p.attrLists[rt.Name] = al
	}
	p.server = types.Entity{UID: types.NewEntityUID(ServerType, types.String(m.Server)),
		Attributes: types.NewRecord(types.RecordMap{"name": types.String(m.Server)})}
	var errs []error
	for i, pol := range list {
		id := fmt.Sprintf("policy%d", i)
		if a, ok := pol.Annotations()["id"]; ok {
			id = string(a)
		}
		if !p.set.Add(cedar.PolicyID(id), pol) {
			errs = append(errs, fmt.Errorf("policy id %q is used twice", id))
			continue
		}
		p.ids = append(p.ids, id)
		if !validate {
			continue
		}
		if err := v.Policy(id, (*xast.Policy)(pol.AST())); err != nil {
			errs = append(errs, fmt.Errorf("policy %q (%s): %w", id, position(pol), err))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", errInvalid, errors.Join(errs...))
	}
	if err := p.loadEntities(entities); err != nil {
		return nil, fmt.Errorf("%w: entities: %w", errInvalid, err)
	}
	p.buildPlans(args)
	return p, nil
}

func position(pol *cedar.Policy) string {
	pos := pol.Position()
	return fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
}

func validator(src string) (*validate.Validator, error) {
	var s schema.Schema
	if err := s.UnmarshalCedar([]byte(src)); err != nil {
		return nil, err
	}
	r, err := s.Resolve()
	if err != nil {
		return nil, err
	}
	return validate.New(r), nil
}

// loadEntities reads the entities file and adds the action entities.
func (p *Policies) loadEntities(raw []byte) error {
	p.entities = types.EntityMap{}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := p.entities.UnmarshalJSON(raw); err != nil {
			return err
		}
	}
	for uid, e := range p.entities {
		if uid.Type != userType && uid.Type != groupType {
			return fmt.Errorf("%s: only %s and %s entities may be given", uid, userType, groupType)
		}
		if e.Attributes.Len() > 0 || e.Tags.Len() > 0 {
			return fmt.Errorf("%s: give parents only; a user's attributes come from its identity", uid)
		}
		for parent := range e.Parents.All() {
			if parent.Type != groupType {
				return fmt.Errorf("%s: parent %s is not a %s", uid, parent, groupType)
			}
		}
	}
	group := func(name string) types.EntityUID { return types.NewEntityUID("Action", types.String(name)) }
	p.entities[group(groupReadOnly)] = types.Entity{UID: group(groupReadOnly)}
	p.entities[group(groupWrite)] = types.Entity{UID: group(groupWrite)}
	p.entities[group(groupDestructive)] = types.Entity{UID: group(groupDestructive), Parents: types.NewEntityUIDSet(group(groupWrite))}
	for _, a := range p.model.Actions {
		var parents []types.EntityUID
		for _, g := range actionGroups(a) {
			parents = append(parents, group(g))
		}
		p.entities[group(a.Name)] = types.Entity{UID: group(a.Name), Parents: types.NewEntityUIDSet(parents...)}
	}
	return nil
}

// plan is what a decision for one tool needs, built once per load.
type plan struct {
	index  int // in Model.Actions
	action Action
	uid    types.EntityUID
	args   recordType
	// rules are the policies whose action scope can match the tool. A
	// policy whose scope does not match is never evaluated further by
	// Cedar (no decision, no error), so leaving it out changes nothing but
	// the time a decision takes.
	rules ruleList
	// readsArgs: some policy of the tool reads its arguments, for some
	// principal; the arguments must then fit their types, whoever calls.
	readsArgs bool
	// ctxArgs is the type of context.arguments: args, or the empty
	// record when no policy of the tool reads them.
	ctxArgs recordType
	// argsFixed: every field of ctxArgs is a String, a Bool or a set of
	// one of them (at most 64 fields), types a validation against the
	// tool's input schema fixes: validated arguments then fit without a
	// check (Request.ArgumentsValidated).
	argsFixed bool
	// in holds the action and every action group it is in.
	in map[types.EntityUID]bool
	// targets are the resource types of Action.Targets but the server, in
	// that order; serverOK: the tool may act on the server.
	targets  []*attrList
	serverOK bool
	// parked is the evaluation state the tool's last compiled decision
	// used, kept for the next (park): one per tool, so set rewrites little.
	parked atomic.Pointer[evalEnv]
}

// target finds a request's resource type among the tool's targets: -1
// for the server (the empty type), else its index in targets. A type the
// tool does not act on is an error.
func (pl *plan) target(typ string) (int, error) {
	if typ == "" || typ == ServerType {
		if pl.serverOK {
			return -1, nil
		}
		typ = ServerType
	} else {
		for i, al := range pl.targets {
			if al.name == typ {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("tool %q does not act on %s", pl.action.Name, typ)
}

// rule is one policy with what the decision path reads of it.
type rule struct {
	id     cedar.PolicyID
	policy *cedar.Policy
	ast    *xast.Policy
	reads  reads
	// the arguments it reads by name (context.arguments.x, has x); all of
	// them when it uses context.arguments or context otherwise
	allArgs   bool
	argFields map[string]bool
	// prog is the compiled policy (compile.go); nil when it uses
	// something outside the compiled subset.
	prog   cond
	size   int // its compiled form's nodes
	forbid bool
}

// ruleList is a cedar.PolicyIterator over a slice, in file order.
type ruleList []rule

func (l ruleList) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, r := range l {
			if !yield(r.id, r.policy) {
				return
			}
		}
	}
}

func (p *Policies) buildPlans(args map[string]recordType) {
	all := make(ruleList, 0, len(p.ids))
	for _, id := range p.ids {
		pol := p.set.Get(cedar.PolicyID(id))
		ast := (*xast.Policy)(pol.AST())
		allArgs, fields := argumentFields(ast)
		rl := rule{id: cedar.PolicyID(id), policy: pol, ast: ast, reads: policyReads(ast), allArgs: allArgs, argFields: fields,
			forbid: pol.Effect() == cedar.Forbid}
		all = append(all, rl)
	}
	p.plans = make(map[string]*plan, len(p.model.Actions))
	for i, a := range p.model.Actions {
		uid := types.NewEntityUID("Action", types.String(a.Name))
		in := map[types.EntityUID]bool{uid: true}
		for parent := range p.entities[uid].Parents.All() {
			in[parent] = true
			for gp := range p.entities[parent].Parents.All() {
				in[gp] = true
			}
		}
		pl := &plan{index: i, action: a, uid: uid, args: args[a.Name], in: in}
		pl.serverOK = len(a.Targets) == 0 || slices.Contains(a.Targets, ServerType)
		for _, t := range a.Targets {
			if t != ServerType {
				pl.targets = append(pl.targets, p.attrLists[t]) // prepare checked that it is declared
			}
		}
		for _, r := range all {
			if actionScopeMatches(r.ast.Action, uid, in) {
				pl.rules = append(pl.rules, r)
				pl.readsArgs = pl.readsArgs || r.reads.arguments
			}
		}
		pl.ctxArgs = newRecordType(nil)
		if pl.readsArgs {
			pl.ctxArgs = pl.args
		}
		pl.argsFixed = fixedBySchema(pl.ctxArgs)
		for j := range pl.rules { // compiled for this tool: what it fixes is read once, here
			r := &pl.rules[j]
			if prog, size, ok := compilePolicy(r.ast, p, pl); ok {
				r.prog, r.size = prog, size
			}
		}
		p.plans[a.Name] = pl
		p.planList = append(p.planList, pl)
	}
}

// reads says what a policy reads beyond its scope: building the arguments
// record and the resource's attributes is most of a decision's cost, so a
// request leaves out what no policy in play can read.
type reads struct{ arguments, resource, transport, confirmed, time bool }

func (r reads) or(o reads) reads {
	return reads{r.arguments || o.arguments, r.resource || o.resource, r.transport || o.transport,
		r.confirmed || o.confirmed, r.time || o.time}
}

var emptyRecord = types.NewRecord(nil)

// policyReads finds what a policy's conditions read: the resource (any use
// of the variable, or an entity literal that may name it), and each attribute of the context read by name
// (context.transport, context.arguments, ...); any other use of context
// reads all of it. It errs on the side of reading.
func policyReads(pol *xast.Policy) reads {
	var r reads
	for _, c := range pol.Conditions {
		contexts, named := 0, 0
		xast.Inspect(xast.NewNode(c.Body), func(n xast.IsNode) bool {
			switch v := n.(type) {
			case xast.NodeTypeVariable:
				switch v.Name {
				case "resource":
					r.resource = true
				case "context":
					contexts++
				}
			case xast.NodeValue:
				r.resource = r.resource || holdsEntity(v.Value)
			case xast.NodeTypeAccess:
				if isContext(v.Arg) && r.readsContext(string(v.Value)) {
					named++
				}
			}
			return true
		})
		if contexts > named {
			r = r.or(reads{arguments: true, transport: true, confirmed: true, time: true})
		}
	}
	return r
}

// holdsEntity reports whether a literal is or holds an entity (a
// condition reading Dns::Zone::"a.example".zone reads the resource when
// the call is on that zone).
func holdsEntity(v types.Value) bool {
	switch x := v.(type) {
	case types.EntityUID: // users, groups and actions are never the resource (Model.prepare)
		return x.Type != userType && x.Type != groupType && x.Type != actionType
	case types.Set:
		for e := range x.All() {
			if holdsEntity(e) {
				return true
			}
		}
	case types.Record:
		for _, e := range x.All() {
			if holdsEntity(e) {
				return true
			}
		}
	}
	return false
}

// readsContext marks context attribute name as read; false for a name the
// context does not have (the access then counts as an unknown use).
func (r *reads) readsContext(name string) bool {
	switch name {
	case "arguments":
		r.arguments = true
	case "transport":
		r.transport = true
	case "confirmed":
		r.confirmed = true
	case "time":
		r.time = true
	default:
		return false
	}
	return true
}

// argumentFields finds the arguments a policy reads by name: x in
// context.arguments.x and context.arguments has x. all is true when it
// uses context.arguments, or context, any other way (then every argument
// is in its record).
func argumentFields(pol *xast.Policy) (all bool, fields map[string]bool) {
	fields = map[string]bool{}
	for _, c := range pol.Conditions {
		contexts, attrs, args, named := 0, 0, 0, 0
		xast.Inspect(xast.NewNode(c.Body), func(n xast.IsNode) bool {
			switch v := n.(type) {
			case xast.NodeTypeVariable:
				if v.Name == "context" {
					contexts++
				}
			case xast.NodeTypeAccess:
				if isContext(v.Arg) && new(reads).readsContext(string(v.Value)) {
					attrs++
				}
				if isContext(v.Arg) && v.Value == "arguments" {
					args++
				}
				if isArguments(v.Arg) {
					fields[string(v.Value)] = true
					named++
				}
			case xast.NodeTypeHas:
				if isArguments(v.Arg) {
					fields[string(v.Value)] = true
					named++
				}
			}
			return true
		})
		if contexts > attrs || args > named {
			all = true
		}
	}
	return all, fields
}

func isArguments(n xast.IsNode) bool {
	a, ok := n.(xast.NodeTypeAccess)
	return ok && a.Value == "arguments" && isContext(a.Arg)
}

func isContext(n xast.IsNode) bool {
	v, ok := n.(xast.NodeTypeVariable)
	return ok && v.Name == "context"
}

func actionScopeMatches(scope xast.IsActionScopeNode, uid types.EntityUID, in map[types.EntityUID]bool) bool {
	return scopeMatches(scope, uid, in)
}

// scopeMatches decides a principal, action or resource scope for uid,
// which is in every entity of in (the scope node types are shared; each
// kind of scope uses some of them).
func scopeMatches(scope any, uid types.EntityUID, in map[types.EntityUID]bool) bool {
	switch sc := scope.(type) {
	case xast.ScopeTypeAll:
		return true
	case xast.ScopeTypeEq:
		return sc.Entity == uid
	case xast.ScopeTypeIn:
		return in[sc.Entity]
	case xast.ScopeTypeInSet:
		return slices.ContainsFunc(sc.Entities, func(e types.EntityUID) bool { return in[e] })
	case xast.ScopeTypeIs:
		return sc.Type == uid.Type
	case xast.ScopeTypeIsIn:
		return sc.Type == uid.Type && in[sc.Entity]
	}
	return true // a scope this code does not know: let Cedar decide
}

// fixedBySchema reports whether every field of rt has a type that a
// validation against the input schema it was generated from fixes: a
// String ("type": "string"), a Bool ("boolean"), or a set of one of them
// (an array of those) — not a Long, whose range the schema does not
// bound as Cedar does, nor a record. A nullable field is optional, so a
// null it lets through is an absent field, as for a check.
func fixedBySchema(rt recordType) bool {
	if len(rt.list) > 64 {
		return false
	}
	fixed := func(t cedarType) bool { return t == primType("String") || t == primType("Bool") }
	for _, f := range rt.list {
		if st, isSet := f.t.(setType); isSet {
			if !fixed(st.elem) {
				return false
			}
		} else if !fixed(f.t) {
			return false
		}
	}
	return true
}
