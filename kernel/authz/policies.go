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
	"github.com/cedar-policy/cedar-go/x/exp/eval"
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
}

// Parse parses and validates a policy file (Cedar text) and an optional
// entities file (Cedar JSON entities: User and Group entities with parents
// only). name is the policy file's name, for error positions.
func Parse(m *Model, name string, policy, entities []byte) (*Policies, error) {
	return parse(m, name, policy, entities, true)
}

// parse is Parse; validate false skips the schema check (tests hold
// Decide to cedar.Authorize on policies that do not type-check, so that
// evaluation errors happen).
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
	for _, rt := range m.Resources {
		p.resTypes[rt.Name] = rt
		p.attrNames[rt.Name] = slices.Sorted(maps.Keys(rt.Attrs))
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
	// rules are the policies whose scope can match the tool (inScope): Cedar
	// skips the others without a decision or an error, so leaving them out
	// changes nothing but the time a decision takes.
	rules ruleList
	// readsArgs: some policy of the tool reads its arguments, for some
	// principal; the arguments must then fit their types, whoever calls.
	readsArgs bool
	// targets are the resource types of Action.Targets but the server;
	// serverOK: the tool may act on the server.
	targets  []string
	serverOK bool
}

// target refuses a request's resource type when the tool does not act on
// it; the empty type is the server.
func (pl *plan) target(typ string) error {
	if typ == "" || typ == ServerType {
		if pl.serverOK {
			return nil
		}
		typ = ServerType
	} else if slices.Contains(pl.targets, typ) {
		return nil
	}
	return fmt.Errorf("tool %q does not act on %s", pl.action.Name, typ)
}

// rule is one policy with what the decision path reads of it.
type rule struct {
	id     cedar.PolicyID
	policy *cedar.Policy
	ast    *xast.Policy
	scope  *xast.Policy // ast without its conditions (inScope)
	reads  reads
	// the arguments it reads by name (context.arguments.x, has x); all of
	// them when it uses context.arguments or context otherwise
	allArgs   bool
	argFields map[string]bool
}

// inScope reports whether the scope of r can match env's principal,
// action and resource, each known or a variable (eval.Variable), as
// cedar-go's partial evaluation decides it. Cedar evaluates a policy's
// scope before its conditions, and a scope cannot fail: a policy whose
// scope is false is skipped, never evaluated further, never an error. Its
// conditions are left out here, since partial evaluation would drop a
// policy with a false condition after one that fails, where Cedar reports
// the failure (FuzzDecideMatchesCedar found it).
func (r *rule) inScope(env eval.Env) bool {
	_, keep := eval.PartialPolicy(env, r.scope)
	return keep
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
		scope := *ast
		scope.Conditions = nil
		allArgs, fields := argumentFields(ast)
		all = append(all, rule{id: cedar.PolicyID(id), policy: pol, ast: ast, scope: &scope, reads: policyReads(ast),
			allArgs: allArgs, argFields: fields})
	}
	p.plans = make(map[string]*plan, len(p.model.Actions))
	for i, a := range p.model.Actions {
		uid := types.NewEntityUID(actionType, types.String(a.Name))
		pl := &plan{index: i, action: a, uid: uid, args: args[a.Name]}
		pl.serverOK = len(a.Targets) == 0 || slices.Contains(a.Targets, ServerType)
		for _, t := range a.Targets {
			if t != ServerType {
				pl.targets = append(pl.targets, t) // prepare checked that it is declared
			}
		}
		env := eval.Env{Entities: p.entities, Principal: eval.Variable("principal"), Action: uid,
			Resource: eval.Variable("resource"), Context: eval.Variable("context")}
		for _, r := range all {
			if r.inScope(env) {
				pl.rules = append(pl.rules, r)
				pl.readsArgs = pl.readsArgs || r.reads.arguments
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
