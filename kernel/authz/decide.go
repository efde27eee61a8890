package authz

import (
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	"github.com/cedar-policy/cedar-go/x/exp/eval"
)

// Principal is the caller, as a policy sees it: User::"<ID>".
type Principal struct {
	ID   string
	Plan string
	// Auth is how the caller authenticated: none, apikey or oauth.
	Auth string
	// Groups are the groups the caller's identity names (an OAuth claim,
	// the API-key file). The principal is in Group::"<g>" for each, as
	// for a parent given in the entities file.
	Groups []string
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
	Action string
	// ActionIndex is 1 + the index of Action in the Model's Actions, when
	// the caller knows it (a decision then finds the tool's plan by
	// index); 0, or an index that does not name Action, finds it by name.
	ActionIndex int
	Resource    Resource
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
// evaluation failed: any error denies. A Decision may be shared with
// other callers (decisions are memoized): its slices must not be changed.
type Decision struct {
	Allow    bool
	Policies []string
	Errors   []string
	// Reason says why a request was denied, in one line, for the log
	// (never policy text); empty when it was allowed.
	Reason string
}

// Decide answers a request. It never fails open: a request that cannot be
// put to the policies (an unknown tool, a resource of an undeclared type,
// arguments that do not fit) is denied, and so is one where any policy's
// evaluation fails.
//
// cedar.Authorize decides. What is done around it evaluates no condition:
// the policies put to it are those whose scope can match the tool (found
// at load) and the principal (on its first request of the tool), as
// cedar-go's partial evaluation of the scopes finds them — Cedar skips the
// others without a decision or an error; the principal's entity is built
// once per principal and a resource's once per resource; the context
// holds only the attributes the policies put to Cedar read by name, and
// context.arguments only the arguments they read by name; and Cedar's
// decisions are memoized under a key that holds everything those
// policies can read.
func (p *Policies) Decide(r Request) Decision { return p.decide(&r) }

// decide is Decide on a request it does not keep or change.
func (p *Policies) decide(r *Request) Decision {
	var pl *plan
	if i := r.ActionIndex - 1; i >= 0 && i < len(p.planList) && p.planList[i].action.Name == r.Action {
		pl = p.planList[i] // the names are most often one string: compared by address
	} else if pl = p.plans[r.Action]; pl == nil {
		return unknownTool(r.Action)
	}
	if err := pl.target(r.Resource.Type); err != nil {
		return errDecision(err)
	}
	pe := p.lastPrincipal.Load()
	if pe == nil || !pe.pr.equal(&r.Principal) { // cheaper than building the key and hashing it
		pe = p.principalByKey(r.Principal)
		p.lastPrincipal.Store(pe)
	}
	if pl.readsArgs && !pl.args.check(r.Arguments) { // every argument must fit, read or not
		return argsDenial(pl, r.Arguments)
	}
	return p.decideMemo(pl, pe, p.rules(pe, pl), r)
}

// The denials of decide, apart from its common path (whose code a call
// runs through once, cold).

func unknownTool(name string) Decision {
	return Decision{Reason: fmt.Sprintf("tool %q is not in the model", name)}
}

func errDecision(err error) Decision { return Decision{Reason: err.Error()} }

func argsDenial(pl *plan, args map[string]any) Decision {
	_, err := pl.args.value(args)
	return Decision{Reason: fmt.Sprintf("arguments: %v", err)}
}

// principalByKey finds or builds the principal's entry by its key.
func (p *Policies) principalByKey(pr Principal) *principalEntry {
	buf := keyBuffers.Get().(*[]byte)
	defer keyBuffers.Put(buf)
	k := appendPrincipalKey((*buf)[:0], pr)
	if cap(k) <= 4*maxKey {
		*buf = k[:0]
	}
	return p.principalFor(k, pr)
}

// decideMemo is Decide through the memo: Cedar's decision, memoized.
func (p *Policies) decideMemo(pl *plan, pe *principalEntry, rs *toolRules, rp *Request) Decision {
	r := *rp
	buf := keyBuffers.Get().(*[]byte)
	defer keyBuffers.Put(buf)
	key, ctxAt, memo := p.decisionKey(append((*buf)[:0], pe.key...), pl, rs, r)
	if cap(key) <= 4*maxKey {
		*buf = key[:0] // keep a buffer that grew a little, not one a long argument blew up
	}
	slot := p.memo.slot(key)
	if memo {
		if d, ok := slot.get(key); ok {
			return d
		}
	}
	res, err := p.resource(r.Resource, rs.reads.resource)
	if err != nil {
		return Decision{Reason: err.Error()}
	}
	var ctxKey []byte // nil: not keyed
	if memo {
		ctxKey = key[ctxAt:]
	}
	ctx, err := rs.context(ctxKey, r)
	if err != nil {
		return Decision{Reason: err.Error()}
	}
	req := cedar.Request{Principal: pe.entity.UID, Action: pl.uid, Resource: res.UID, Context: ctx}
	dec, diag := cedar.Authorize(rs.rules, &requestEntities{base: p.entities, principal: pe.entity, resource: res}, req)
	d := decision(dec, diag)
	if memo {
		slot.put(key, d)
	}
	return d
}

var keyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, maxKey); return &b }}

// maxKey bounds a decision's memo key: a request whose key is longer (a
// policy reads a long argument) is decided without the memo.
const maxKey = 512

// decisionKey encodes everything a decision of pl for pe can depend on:
// the principal, the tool, the resource (with its attributes when a policy
// in play reads them) and the context attributes those policies read.
// Decisions are pure functions of these (the set and its entities never
// change), so equal keys have equal decisions. ok is false when the
// request is not memoized: its key is too long, or a value does not fit
// its type (the decision then says why).
//
// b already holds the principal's key (appendPrincipalKey), which is
// self-delimiting.
//
// The context's part of the key begins at ctxAt: it determines the context
// record contextRecord builds for rs.
func (p *Policies) decisionKey(b []byte, pl *plan, rs *toolRules, r Request) (_ []byte, ctxAt int, ok bool) {
	rd := rs.reads
	b = appendKeyInt(b, int64(pl.index))
	b = appendKeyString(appendKeyString(b, r.Resource.Type), r.Resource.ID)
	if rd.resource && r.Resource.Type != "" && r.Resource.Type != ServerType {
		for _, name := range p.attrNames[r.Resource.Type] {
			if b, ok = appendAttrKey(b, r.Resource.Attrs[name]); !ok {
				return b, 0, false
			}
		}
	}
	ctxAt = len(b)
	if rd.transport {
		b = appendKeyString(b, r.Transport)
	}
	if rd.confirmed {
		b = append(b, "ft"[boolIndex(r.Confirmed)])
	}
	if rd.time {
		b = append(strconv.AppendInt(b, r.Time.Unix(), 10), ';')
	}
	if rd.arguments {
		if b, ok = rs.args.appendKey(b, r.Arguments); !ok {
			return b, 0, false
		}
	}
	return b, ctxAt, len(b) <= maxKey
}

// appendAttrKey encodes a resource attribute value that resource accepted.
func appendAttrKey(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return appendKeyString(append(b, 's'), x), true
	case int64:
		return append(appendKeyInt(append(b, 'l'), x), ';'), true
	case int:
		return append(appendKeyInt(append(b, 'l'), int64(x)), ';'), true
	case bool:
		return append(b, "FT"[boolIndex(x)]), true
	case []string:
		b = append(appendKeyInt(append(b, 'S'), int64(len(x))), '[')
		for _, s := range x {
			b = appendKeyString(b, s)
		}
		return b, true
	}
	return b, false
}

func decision(dec cedar.Decision, diag cedar.Diagnostic) Decision {
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
	case d.Allow: // the policies say it; no line is logged
	case len(d.Policies) > 0:
		d.Reason = "forbidden by " + strings.Join(d.Policies, ", ")
	default:
		d.Reason = "no policy permits it"
	}
	return d
}

// contextRecord is the request's context with the attributes rs reads,
// and of the arguments those it reads.
func contextRecord(rs *toolRules, r Request) (types.Record, error) {
	rd := rs.reads
	if rd == (reads{}) || rd == (reads{resource: true}) {
		return emptyRecord, nil
	}
	m := make(types.RecordMap, 4)
	if rd.arguments {
		argv, err := rs.args.value(r.Arguments)
		if err != nil {
			return emptyRecord, fmt.Errorf("arguments: %w", err)
		}
		m["arguments"] = argv
	}
	if rd.transport {
		m["transport"] = types.String(r.Transport)
	}
	if rd.confirmed {
		m["confirmed"] = types.Boolean(r.Confirmed)
	}
	if rd.time {
		m["time"] = types.Long(r.Time.Unix())
	}
	return types.NewRecord(m), nil
}

// principalEntry is a principal's entity and, per tool, the policies that
// can apply to it.
type principalEntry struct {
	pr     Principal // what it was built from (a copy)
	key    string    // pr's key (appendPrincipalKey)
	entity types.Entity
	byTool []atomic.Pointer[toolRules]
}

// toolRules are the policies of a tool whose scope can match a principal.
type toolRules struct {
	rules ruleList
	reads reads
	args  recordType // the tool's arguments those policies read
	// lastContext is the context record last built for these rules, under
	// the context's part of its decision key: a listing decides one call's
	// request on many resources, and builds the context once.
	lastContext atomic.Pointer[keyedContext]
}

type keyedContext struct {
	key string
	rec types.Record
}

// context is contextRecord, from lastContext when key (the context's part
// of the decision key; nil when the request has none) is the same.
func (rs *toolRules) context(key []byte, r Request) (types.Record, error) {
	if c := rs.lastContext.Load(); key != nil && c != nil && c.key == string(key) {
		return c.rec, nil
	}
	rec, err := contextRecord(rs, r)
	if err == nil && key != nil {
		rs.lastContext.Store(&keyedContext{key: string(key), rec: rec})
	}
	return rec, err
}

// principalEnv is the evaluation environment of pe's requests of pl, the
// resource and the context unknown (partial evaluation).
func (p *Policies) principalEnv(pe *principalEntry, pl *plan) eval.Env {
	return eval.Env{Entities: &requestEntities{base: p.entities, principal: pe.entity}, Principal: pe.entity.UID, Action: pl.uid,
		Resource: eval.Variable("resource"), Context: eval.Variable("context")}
}

// rules are the policies of pl whose scope can match the principal of pe
// (rule.inScope); found on the principal's first request of the tool.
func (p *Policies) rules(pe *principalEntry, pl *plan) *toolRules {
	if tr := pe.byTool[pl.index].Load(); tr != nil {
		return tr
	}
	tr := &toolRules{}
	env := p.principalEnv(pe, pl)
	allArgs, fields := false, map[string]bool{}
	for _, r := range pl.rules {
		if r.inScope(env) {
			tr.rules = append(tr.rules, r)
			tr.reads = tr.reads.or(r.reads)
			if r.reads.arguments {
				allArgs = allArgs || r.allArgs
				maps.Copy(fields, r.argFields)
			}
		}
	}
	tr.args = pl.args
	if !allArgs {
		tr.args = pl.args.only(fields) // no policy in play can see the others
	}
	pe.byTool[pl.index].Store(tr)
	return tr
}

// principal builds the principal's entity, once per principal: its
// parents are the groups the entities file gives it and those its identity
// names; its groups attribute lists every group it is in, directly or
// through other groups.
func (p *Policies) principal(pr Principal) *principalEntry {
	return p.principalFor(appendPrincipalKey(nil, pr), pr)
}

// principalFor is principal with the principal's key already encoded.
func (p *Policies) principalFor(k []byte, pr Principal) *principalEntry {
	if e, ok := p.principals.getBytes(k); ok {
		return e
	}
	key := string(k)
	pr.Groups, pr.Scopes = slices.Clone(pr.Groups), slices.Clone(pr.Scopes) // e.pr: not the caller's arrays
	uid := types.NewEntityUID(userType, types.String(pr.ID))
	parents := p.entities[uid].Parents.Slice()
	for _, g := range pr.Groups {
		parents = append(parents, types.NewEntityUID(groupType, types.String(g)))
	}
	var groups []string
	for g := range p.ancestors(parents) {
		groups = append(groups, string(g.ID))
	}
	slices.Sort(groups)
	e := &principalEntry{pr: pr, key: key, byTool: make([]atomic.Pointer[toolRules], len(p.model.Actions))}
	e.entity = types.Entity{UID: uid, Parents: types.NewEntityUIDSet(parents...), Attributes: types.NewRecord(types.RecordMap{
		"plan":   types.String(pr.Plan),
		"auth":   types.String(pr.Auth),
		"groups": stringSet(groups),
		"scopes": stringSet(pr.Scopes),
	})}
	p.principals.put(key, e)
	return e
}

// equal reports whether two principals are the same: the same key, so
// the same principalEntry.
func (a *Principal) equal(b *Principal) bool {
	return a.ID == b.ID && a.Plan == b.Plan && a.Auth == b.Auth && slices.Equal(a.Groups, b.Groups) && slices.Equal(a.Scopes, b.Scopes)
}

// ancestors are the groups given and every group they are in.
func (p *Policies) ancestors(groups []types.EntityUID) map[types.EntityUID]bool {
	seen := map[types.EntityUID]bool{}
	queue := slices.Clone(groups)
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		if seen[g] {
			continue
		}
		seen[g] = true
		queue = slices.AppendSeq(queue, p.entities[g].Parents.All())
	}
	return seen
}

// appendPrincipalKey appends what identifies a principal with everything
// its entity holds; lengths first, so that no two principals share a key
// and the key ends where it says.
func appendPrincipalKey(b []byte, pr Principal) []byte {
	b = appendKeyString(appendKeyString(appendKeyString(b, pr.ID), pr.Plan), pr.Auth)
	b = append(appendKeyInt(append(b, 'g'), int64(len(pr.Groups))), ':')
	for _, s := range pr.Groups {
		b = appendKeyString(b, s)
	}
	b = append(appendKeyInt(append(b, 's'), int64(len(pr.Scopes))), ':')
	for _, s := range pr.Scopes {
		b = appendKeyString(b, s)
	}
	return b
}

// resEntry is a resource's entity with the attributes it was built from.
type resEntry struct {
	attrs  map[string]any
	entity types.Entity
}

// resource builds the resource entity, of a type the tool acts on (the
// caller checked), checking it against its type; withAttrs false leaves
// the attributes out (no policy in play reads them).
func (p *Policies) resource(r Resource, withAttrs bool) (types.Entity, error) {
	if r.Type == "" || r.Type == ServerType {
		return p.server, nil
	}
	uid := types.NewEntityUID(types.EntityType(r.Type), types.String(r.ID))
	if !withAttrs {
		return types.Entity{UID: uid}, nil
	}
	rt := p.resTypes[r.Type]
	if e, ok := p.resources.get(uid); ok && sameAttrs(p.attrNames[r.Type], e.attrs, r.Attrs) {
		return e.entity, nil
	}
	m := make(types.RecordMap, len(rt.Attrs))
	kept := make(map[string]any, len(rt.Attrs))
	for name, t := range rt.Attrs {
		v, err := attrValue(t, r.Attrs[name])
		if err != nil {
			return types.Entity{}, attrError(r.Type, name, err)
		}
		m[types.String(name)] = v
		kept[name] = r.Attrs[name]
		if s, ok := kept[name].([]string); ok {
			kept[name] = slices.Clone(s)
		}
	}
	e := &resEntry{attrs: kept, entity: types.Entity{UID: uid, Attributes: types.NewRecord(m)}}
	p.resources.put(uid, e)
	return e.entity, nil
}

// sameAttrs reports whether two attribute maps hold the same values, of
// the same Go types, under names.
func sameAttrs(names []string, a, b map[string]any) bool {
	for _, name := range names {
		switch x := a[name].(type) {
		case []string:
			y, ok := b[name].([]string)
			if !ok || !slices.Equal(x, y) {
				return false
			}
		default:
			if b[name] != x {
				return false
			}
		}
	}
	return true
}

func attrError(typ, name string, err error) error {
	return fmt.Errorf("%s attribute %q: %w", typ, name, err)
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

// maxCached bounds each cache; when full it starts over.
const maxCached = 4096

// cache is a bounded map read far more often than written; readers share
// a read lock held only for the lookup.
type cache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

func (c *cache[K, V]) get(k K) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *cache[K, V]) put(k K, v V) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = make(map[K]V)
	}
	c.m[k] = v
	c.mu.Unlock()
}

// getBytes looks a string-keyed cache up without allocating the key.
func (c *cache[K, V]) getBytes(k []byte) (V, bool) {
	c.mu.RLock()
	v, ok := any(c.m).(map[string]V)[string(k)]
	c.mu.RUnlock()
	return v, ok
}

// memo holds recent decisions in a fixed table of slots, indexed by a
// seeded hash of the key: a lookup is a hash and a comparison, an insert
// replaces the slot's entry, and nothing grows or is cleared. Keys that
// collide evict each other, which costs only a decision.
type memo struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoEntry]
}

const memoSlots = 4096

type memoEntry struct {
	key string
	d   Decision
}

type memoSlot struct{ p *atomic.Pointer[memoEntry] }

func newMemo() *memo { return &memo{seed: maphash.MakeSeed()} }

func (m *memo) slot(key []byte) memoSlot {
	return memoSlot{&m.slots[maphash.Bytes(m.seed, key)%memoSlots]}
}

func (s memoSlot) get(key []byte) (Decision, bool) {
	if e := s.p.Load(); e != nil && e.key == string(key) {
		return e.d, true
	}
	return Decision{}, false
}

func (s memoSlot) put(key []byte, d Decision) { s.p.Store(&memoEntry{key: string(key), d: d}) }
