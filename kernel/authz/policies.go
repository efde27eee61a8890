package authz

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

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
	args     map[string]recordType
	set      *cedar.PolicySet
	byAction map[string]cedar.PolicyMap // the policies whose action scope can match each tool
	reads    map[string]reads           // what those policies read, per tool
	ids      []string
	entities types.EntityMap // groups, users' group memberships, actions
	groups   map[types.String][]string
	server   types.Entity

	mu         sync.Mutex
	principals map[principalKey]types.Entity // built once per principal; bounded
	resources  map[string]types.Entity       // built once per resource and attributes; bounded
	attrNames  map[string][]string           // per resource type, sorted
}

type principalKey struct{ id, plan, auth, scopes string }

// maxPrincipals bounds the principal cache; when full it starts over.
const maxPrincipals = 4096

// Parse parses and validates a policy file (Cedar text) and an optional
// entities file (Cedar JSON entities: User and Group entities with parents
// only). name is the policy file's name, for error positions.
func Parse(m *Model, name string, policy, entities []byte) (*Policies, error) {
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
	p := &Policies{model: m, args: args, set: cedar.NewPolicySet(), principals: map[principalKey]types.Entity{}, resources: map[string]types.Entity{}}
	p.attrNames = map[string][]string{}
	for _, rt := range m.Resources {
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
	p.indexByAction()
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
		if uid.Type != UserType && uid.Type != GroupType {
			return fmt.Errorf("%s: only %s and %s entities may be given", uid, UserType, GroupType)
		}
		if e.Attributes.Len() > 0 || e.Tags.Len() > 0 {
			return fmt.Errorf("%s: give parents only; a user's attributes come from its identity", uid)
		}
		for parent := range e.Parents.All() {
			if parent.Type != GroupType {
				return fmt.Errorf("%s: parent %s is not a %s", uid, parent, GroupType)
			}
		}
	}
	p.groups = map[types.String][]string{}
	for uid := range p.entities {
		if uid.Type == UserType {
			p.groups[uid.ID] = p.closure(uid)
		}
	}
	group := func(name string) types.EntityUID { return types.NewEntityUID("Action", types.String(name)) }
	p.entities[group(GroupReadOnly)] = types.Entity{UID: group(GroupReadOnly)}
	p.entities[group(GroupWrite)] = types.Entity{UID: group(GroupWrite)}
	p.entities[group(GroupDestructive)] = types.Entity{UID: group(GroupDestructive), Parents: types.NewEntityUIDSet(group(GroupWrite))}
	for _, a := range p.model.Actions {
		var parents []types.EntityUID
		for _, g := range actionGroups(a) {
			parents = append(parents, group(g))
		}
		p.entities[group(a.Name)] = types.Entity{UID: group(a.Name), Parents: types.NewEntityUIDSet(parents...)}
	}
	return nil
}

// closure lists every group uid is in, directly or through other groups.
func (p *Policies) closure(uid types.EntityUID) []string {
	seen := map[types.EntityUID]bool{}
	queue := []types.EntityUID{uid}
	for len(queue) > 0 {
		e := p.entities[queue[0]]
		queue = queue[1:]
		for parent := range e.Parents.All() {
			if !seen[parent] {
				seen[parent] = true
				queue = append(queue, parent)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for g := range seen {
		out = append(out, string(g.ID))
	}
	slices.Sort(out)
	return out
}

// IDs are the policy ids, in file order.
func (p *Policies) IDs() []string { return slices.Clone(p.ids) }

// Principal is the caller, as a policy sees it: User::"<ID>".
type Principal struct {
	ID   string
	Plan string
	// Auth is how the caller authenticated: none, apikey or oauth.
	Auth string
	// Scopes are the OAuth scopes the caller's token grants.
	Scopes []string
}

// Resource is the canonical target of a call. The zero value is the server
// itself.
type Resource struct {
	Type  string
	ID    string
	Attrs map[string]any // string, int64, bool or []string, as the type declares
}

// Request is one authorization question.
type Request struct {
	Principal Principal
	// Action is the tool's name.
	Action   string
	Resource Resource
	// Transport is "stdio" or "http".
	Transport string
	// Confirmed: the call can run only through the confirmation gate.
	Confirmed bool
	Time      time.Time
	// Arguments are the validated arguments, as decoded from JSON.
	Arguments map[string]any
}

// Decision is the answer. Policies are the ids of the policies that
// decided: the forbids that matched, else the permits that matched; none
// for a denial because no policy permits. Errors name policies whose
// evaluation failed: any error denies.
type Decision struct {
	Allow    bool
	Policies []string
	Errors   []string
	// Reason says why in one line, for the log (never policy text).
	Reason string
}

// Decide answers a request. It never fails open: a request that cannot be
// put to the policies (an unknown tool, a resource of an undeclared type,
// arguments that do not fit) is denied, and so is one where any policy's
// evaluation fails.
func (p *Policies) Decide(r Request) Decision {
	req, ents, err := p.request(r)
	if err != nil {
		return Decision{Reason: err.Error()}
	}
	dec, diag := cedar.Authorize(p.byAction[r.Action], ents, req)
	d := Decision{Allow: dec == cedar.Allow}
	for _, reason := range diag.Reasons {
		d.Policies = append(d.Policies, string(reason.PolicyID))
	}
	for _, e := range diag.Errors {
		d.Errors = append(d.Errors, string(e.PolicyID))
	}
	slices.Sort(d.Policies)
	slices.Sort(d.Errors)
	switch {
	case len(d.Errors) > 0:
		d.Allow, d.Policies = false, d.Errors
		d.Reason = "a policy's evaluation failed: " + strings.Join(d.Errors, ", ")
	case d.Allow:
		d.Reason = "permitted by " + strings.Join(d.Policies, ", ")
	case len(d.Policies) > 0:
		d.Reason = "forbidden by " + strings.Join(d.Policies, ", ")
	default:
		d.Reason = "no policy permits it"
	}
	return d
}

func (p *Policies) request(r Request) (cedar.Request, types.EntityGetter, error) {
	args, ok := p.args[r.Action]
	if !ok {
		return cedar.Request{}, nil, fmt.Errorf("tool %q is not in the model", r.Action)
	}
	rd := p.reads[r.Action]
	res, err := p.resource(r.Action, r.Resource, rd.resource)
	if err != nil {
		return cedar.Request{}, nil, err
	}
	var argv types.Value = emptyRecord
	if rd.arguments {
		if argv, err = args.value(r.Arguments); err != nil {
			return cedar.Request{}, nil, fmt.Errorf("arguments: %w", err)
		}
	}
	ctx := types.NewRecord(types.RecordMap{
		"transport": types.String(r.Transport),
		"confirmed": types.Boolean(r.Confirmed),
		"time":      types.Long(r.Time.Unix()),
		"arguments": argv,
	})
	pr := p.principal(r.Principal)
	req := cedar.Request{Principal: pr.UID, Action: types.NewEntityUID("Action", types.String(r.Action)), Resource: res.UID, Context: ctx}
	return req, &requestEntities{base: p.entities, principal: pr, resource: res}, nil
}

// principal builds the principal's entity, once per principal.
func (p *Policies) principal(pr Principal) types.Entity {
	key := principalKey{pr.ID, pr.Plan, pr.Auth, strings.Join(pr.Scopes, " ")}
	p.mu.Lock()
	e, ok := p.principals[key]
	p.mu.Unlock()
	if ok {
		return e
	}
	uid := types.NewEntityUID(UserType, types.String(pr.ID))
	e = types.Entity{UID: uid, Parents: p.entities[uid].Parents, Attributes: types.NewRecord(types.RecordMap{
		"plan":   types.String(pr.Plan),
		"auth":   types.String(pr.Auth),
		"groups": stringSet(p.groups[uid.ID]),
		"scopes": stringSet(pr.Scopes),
	})}
	p.mu.Lock()
	if len(p.principals) >= maxPrincipals {
		clear(p.principals)
	}
	p.principals[key] = e
	p.mu.Unlock()
	return e
}

// resource builds the resource entity, checking it against its type;
// withAttrs false leaves the attributes out (no policy of the tool reads
// them).
func (p *Policies) resource(action string, r Resource, withAttrs bool) (types.Entity, error) {
	a, _ := p.model.action(action)
	if r.Type == "" {
		r.Type = ServerType
	}
	if !slices.Contains(a.Targets, r.Type) && (r.Type != ServerType || len(a.Targets) > 0) { // no Targets: the server
		return types.Entity{}, fmt.Errorf("tool %q does not act on %s", action, r.Type)
	}
	if r.Type == ServerType {
		return p.server, nil
	}
	uid := types.NewEntityUID(types.EntityType(r.Type), types.String(r.ID))
	if !withAttrs {
		return types.Entity{UID: uid}, nil
	}
	i := slices.IndexFunc(p.model.Resources, func(t ResourceType) bool { return t.Name == r.Type })
	rt := p.model.Resources[i]
	key := resourceKey(p.attrNames[r.Type], r)
	p.mu.Lock()
	e, ok := p.resources[key]
	p.mu.Unlock()
	if ok {
		return e, nil
	}
	m := make(types.RecordMap, len(rt.Attrs))
	for name, t := range rt.Attrs {
		v, err := attrValue(t, r.Attrs[name])
		if err != nil {
			return types.Entity{}, fmt.Errorf("%s attribute %q: %w", r.Type, name, err)
		}
		m[types.String(name)] = v
	}
	e = types.Entity{UID: uid, Attributes: types.NewRecord(m)}
	p.mu.Lock()
	if len(p.resources) >= maxPrincipals {
		clear(p.resources)
	}
	p.resources[key] = e
	p.mu.Unlock()
	return e, nil
}

// resourceKey identifies a resource with its attributes (names sorted;
// values in Go syntax, so that no two differ only in quoting), for the
// cache.
func resourceKey(names []string, r Resource) string {
	var b strings.Builder
	b.WriteString(r.Type)
	b.WriteByte(0)
	b.WriteString(r.ID)
	for _, name := range names {
		fmt.Fprintf(&b, "\x00%#v", r.Attrs[name])
	}
	return b.String()
}

func attrValue(t AttrType, v any) (types.Value, error) {
	switch x := v.(type) {
	case string:
		if t == String {
			return types.String(x), nil
		}
	case int64:
		if t == Long {
			return types.Long(x), nil
		}
	case int:
		if t == Long {
			return types.Long(x), nil
		}
	case bool:
		if t == Bool {
			return types.Boolean(x), nil
		}
	case []string:
		if t == StringSet {
			return stringSet(x), nil
		}
	}
	return nil, fmt.Errorf("a %T where %s was declared", v, t)
}

func stringSet(s []string) types.Set {
	vs := make([]types.Value, len(s))
	for i, x := range s {
		vs[i] = types.String(x)
	}
	return types.NewSet(vs...)
}

// requestEntities is the file's entities plus this request's principal and
// resource, without copying the map.
type requestEntities struct {
	base      types.EntityMap
	principal types.Entity
	resource  types.Entity
}

func (e *requestEntities) Get(uid types.EntityUID) (types.Entity, bool) {
	switch uid {
	case e.principal.UID:
		return e.principal, true
	case e.resource.UID:
		return e.resource, true
	}
	return e.base.Get(uid)
}

// indexByAction keeps, per tool, only the policies whose action scope can
// match it. A policy whose scope does not match is never evaluated further
// by Cedar (no decision, no error), so leaving it out changes nothing but
// the time a decision takes.
func (p *Policies) indexByAction() {
	p.byAction = make(map[string]cedar.PolicyMap, len(p.model.Actions))
	p.reads = make(map[string]reads, len(p.model.Actions))
	for _, a := range p.model.Actions {
		uid := types.NewEntityUID("Action", types.String(a.Name))
		in := map[types.EntityUID]bool{uid: true}
		for parent := range p.entities[uid].Parents.All() {
			in[parent] = true
			for gp := range p.entities[parent].Parents.All() {
				in[gp] = true
			}
		}
		m := cedar.PolicyMap{}
		for id, pol := range p.set.All() {
			if actionScopeMatches((*xast.Policy)(pol.AST()).Action, uid, in) {
				m[id] = pol
			}
		}
		p.byAction[a.Name] = m
		var rd reads
		for _, pol := range m {
			r := policyReads((*xast.Policy)(pol.AST()))
			rd.arguments, rd.resource = rd.arguments || r.arguments, rd.resource || r.resource
		}
		p.reads[a.Name] = rd
	}
}

// reads says what a tool's policies read beyond the scope: building the
// arguments record and the resource's attributes is most of a decision's
// cost, so a request leaves out what no policy of the tool can read.
type reads struct{ arguments, resource bool }

var emptyRecord = types.NewRecord(nil)

// policyReads finds what a policy's conditions read: the resource (any use
// of the variable), and the arguments (any use of context other than
// reading transport, confirmed or time). It errs on the side of reading.
func policyReads(pol *xast.Policy) reads {
	var r reads
	for _, c := range pol.Conditions {
		contexts, plain := 0, 0
		xast.Inspect(xast.NewNode(c.Body), func(n xast.IsNode) bool {
			switch v := n.(type) {
			case xast.NodeTypeVariable:
				switch v.Name {
				case "resource":
					r.resource = true
				case "context":
					contexts++
				}
			case xast.NodeTypeAccess:
				if isContext(v.Arg) && (v.Value == "transport" || v.Value == "confirmed" || v.Value == "time") {
					plain++
				}
			}
			return true
		})
		if contexts > plain {
			r.arguments = true
		}
	}
	return r
}

func isContext(n xast.IsNode) bool {
	v, ok := n.(xast.NodeTypeVariable)
	return ok && v.Name == "context"
}

func actionScopeMatches(scope xast.IsActionScopeNode, uid types.EntityUID, in map[types.EntityUID]bool) bool {
	switch sc := scope.(type) {
	case xast.ScopeTypeAll:
		return true
	case xast.ScopeTypeEq:
		return sc.Entity == uid
	case xast.ScopeTypeIn:
		return in[sc.Entity]
	case xast.ScopeTypeInSet:
		return slices.ContainsFunc(sc.Entities, func(e types.EntityUID) bool { return in[e] })
	}
	return true // a scope this code does not know: let Cedar decide
}
