package authz

import (
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
)

func (c *compiler) access(n xast.IsNode, name string) expr {
	if f := c.directAccess(n, name); f != nil {
		return f
	}
	if read := c.direct(n, name); read != nil {
		return func(e *evalEnv) (value, status) {
			v, found, st := read(e)
			if st != ok || !found {
				return value{}, failure(st)
			}
			return v, ok
		}
	}
	f := c.compile(n)
	return func(e *evalEnv) (value, status) {
		x, st := f(e)
		if st != ok {
			return value{}, st
		}
		var v value
		found := false
		switch x.k {
		case kEntity:
			var exists bool
			v, found, exists, st = e.entityAttr(x, name)
			found = found && exists
		case kRecord:
			v, found, st = e.recordAttr(x, name)
		}
		if st != ok || !found {
			return value{}, failure(st)
		}
		return v, ok
	}
}

func (c *compiler) has(n xast.IsNode, name string) cond {
	if a, isAccess := n.(xast.NodeTypeAccess); isAccess && isContext(a.Arg) && a.Value == "arguments" {
		// a String argument, tested without building its value: what
		// argumentRead finds
		if f, declared := c.pl.ctxArgs.fields[name]; declared && f.t == primType("String") {
			j := slices.Index(c.pl.ctxArgs.names, name)
			return func(e *evalEnv) (bool, status) {
				switch e.arg(j).(type) {
				case nil: // absent or null
					return false, ok
				case string:
					return true, ok
				}
				return false, unsupported // not what the check let through: let Cedar say
			}
		}
	}
	if read := c.direct(n, name); read != nil {
		return func(e *evalEnv) (bool, status) {
			_, found, st := read(e)
			return found && st == ok, st
		}
	}
	f := c.compile(n)
	return func(e *evalEnv) (bool, status) {
		x, st := f(e)
		if st != ok {
			return false, st
		}
		found := false
		switch x.k {
		case kEntity:
			_, found, _, st = e.entityAttr(x, name) // an entity that does not exist has nothing
		case kRecord:
			_, found, st = e.recordAttr(x, name)
		default:
			return false, failed
		}
		return found && st == ok, st
	}
}

// direct reads attribute name of principal, resource, context or
// context.arguments without going through their values: what access and
// has would find, looked up the way entityAttr and recordAttr do (the
// principal is a User and the resource never is, so neither hides the
// other). nil for any other expression.
func (c *compiler) direct(n xast.IsNode, name string) func(e *evalEnv) (value, bool, status) {
	switch v := n.(type) {
	case xast.NodeTypeVariable:
		switch v.Name {
		case "principal":
			if read, found := principalReads[name]; found { // resolved here, not per call
				return func(e *evalEnv) (value, bool, status) { return read(e), true, ok }
			}
			return func(*evalEnv) (value, bool, status) { return value{}, false, ok }
		case "resource":
			return c.resourceRead(name)
		case "context":
			if read, found := contextReads[name]; found {
				return func(e *evalEnv) (value, bool, status) { return read(e), true, ok }
			}
			return func(*evalEnv) (value, bool, status) { return value{}, false, ok }
		}
	case xast.NodeTypeAccess:
		if isContext(v.Arg) && v.Value == "arguments" {
			return c.argumentRead(name)
		}
	}
	return nil
}

// directAccess is access for the reads resourceRead and argumentRead
// make, in one closure: what access on direct finds (a missing attribute
// is an error), without the call between them. nil for any other
// expression.
func (c *compiler) directAccess(n xast.IsNode, name string) expr {
	switch v := n.(type) {
	case xast.NodeTypeVariable:
		if v.Name != "resource" {
			return nil
		}
		at, decl, server, hasName := c.resourceSlots(name)
		if len(at) == 1 && at[0] >= 0 { // one target type, which declares it: no table to read
			j, t := at[0], decl[0]
			return func(e *evalEnv) (value, status) {
				if e.ti < 0 {
					if hasName {
						return server, ok
					}
					return value{}, failed
				}
				v, found, st := e.slotRead(t, j)
				if st != ok || !found {
					return value{}, failure(st)
				}
				return v, ok
			}
		}
		return func(e *evalEnv) (value, status) {
			if e.ti < 0 {
				if hasName {
					return server, ok
				}
				return value{}, failed
			}
			j := at[e.ti]
			if j < 0 {
				return value{}, failed
			}
			v, found, st := e.slotRead(decl[e.ti], j)
			if st != ok || !found {
				return value{}, failure(st)
			}
			return v, ok
		}
	case xast.NodeTypeAccess:
		if !isContext(v.Arg) || v.Value != "arguments" {
			return nil
		}
		f, declared := c.pl.ctxArgs.fields[name]
		if !declared {
			return func(*evalEnv) (value, status) { return value{}, failed }
		}
		j := slices.Index(c.pl.ctxArgs.names, name)
		if f.t == primType("String") {
			return func(e *evalEnv) (value, status) {
				switch x := e.arg(j).(type) {
				case nil: // absent or null: not in the record
					return value{}, failed
				case string:
					return value{k: kString, s: x}, ok
				}
				return value{}, unsupported // not what the check let through: let Cedar say
			}
		}
		return func(e *evalEnv) (value, status) {
			x := e.arg(j)
			if x == nil {
				return value{}, failed
			}
			fv, st := jsonValue(f.t, x)
			if st != ok {
				return value{}, failure(st)
			}
			return fv, ok
		}
	}
	return nil
}

// stringRead is what directAccess reads (through access) for n, an
// attribute declared a String of the resource — of the tool's one target
// type — or of context.arguments, as a string, without building its
// value: equality with a literal and like read it so. nil for any other
// expression.
func (c *compiler) stringRead(n xast.IsNode) func(e *evalEnv) (string, status) {
	a, isAccess := n.(xast.NodeTypeAccess)
	if !isAccess {
		return nil
	}
	name := string(a.Value)
	switch v := a.Arg.(type) {
	case xast.NodeTypeVariable:
		if v.Name != "resource" {
			return nil
		}
		at, decl, server, hasName := c.resourceSlots(name)
		if len(at) != 1 || at[0] < 0 || decl[0] != String {
			return nil
		}
		j := at[0]
		return func(e *evalEnv) (string, status) {
			if e.ti < 0 { // the server
				if hasName {
					return server.s, ok
				}
				return "", failed
			}
			return e.res[j].s, ok // checked: a String
		}
	case xast.NodeTypeAccess:
		if !isContext(v.Arg) || v.Value != "arguments" {
			return nil
		}
		f, declared := c.pl.ctxArgs.fields[name]
		if !declared || f.t != primType("String") {
			return nil
		}
		j := slices.Index(c.pl.ctxArgs.names, name)
		return func(e *evalEnv) (string, status) {
			switch x := e.arg(j).(type) {
			case nil: // absent or null: not in the record
				return "", failed
			case string:
				return x, ok
			}
			return "", unsupported // not what the check let through: let Cedar say
		}
	}
	return nil
}

// resourceSlots finds, for each of the tool's target types, where
// attribute name is in its names (-1: not declared) and its declared
// type; and the server's value for it (hasName: the server has it).
func (c *compiler) resourceSlots(name string) (at []int, decl []AttrType, server value, hasName bool) {
	at = make([]int, len(c.pl.targets))
	decl = make([]AttrType, len(c.pl.targets))
	for i, al := range c.pl.targets {
		at[i] = slices.Index(al.names, name)
		decl[i] = al.attrs[name]
	}
	if hasName = name == "name"; hasName {
		server = value{k: kString, s: c.p.model.Server}
	}
	return at, decl, server, hasName
}

// resourceRead reads attribute name of the resource: what resourceAttr
// finds, from the value loadAttrs kept, its place and declared type found
// here for each of the tool's target types.
func (c *compiler) resourceRead(name string) func(e *evalEnv) (value, bool, status) {
	at, decl, server, hasName := c.resourceSlots(name)
	return func(e *evalEnv) (value, bool, status) {
		if e.ti < 0 {
			return server, hasName, ok
		}
		j := at[e.ti]
		if j < 0 {
			return value{}, false, ok
		}
		return e.slotRead(decl[e.ti], j)
	}
}

// argumentRead reads field name of context.arguments (recordField): the
// value loadArgs kept, its place and declared type found here.
func (c *compiler) argumentRead(name string) func(e *evalEnv) (value, bool, status) {
	f, declared := c.pl.ctxArgs.fields[name]
	if !declared {
		return func(*evalEnv) (value, bool, status) { return value{}, false, ok }
	}
	j := slices.Index(c.pl.ctxArgs.names, name)
	if f.t == primType("String") {
		return func(e *evalEnv) (value, bool, status) {
			switch x := e.arg(j).(type) {
			case nil: // absent or null: not in the record
				return value{}, false, ok
			case string:
				return value{k: kString, s: x}, true, ok
			}
			return value{}, true, unsupported // not what the check let through: let Cedar say
		}
	}
	return func(e *evalEnv) (value, bool, status) {
		x := e.arg(j)
		if x == nil {
			return value{}, false, ok
		}
		fv, st := jsonValue(f.t, x)
		return fv, true, st
	}
}

// entityAttr reads an attribute of an entity, looked up as the request's
// entities are (requestEntities): the principal, the resource, then the
// file's entities and the actions, which have no attributes.
func (e *evalEnv) entityAttr(x value, name string) (v value, found, exists bool, st status) {
	if x.et == "" && x.s == "" {
		return value{}, false, false, ok // the unspecified entity: an error to read
	}
	if x.et == userType && x.s == e.pe.pr.ID {
		v, found := e.principalAttr(name)
		return v, found, true, ok
	}
	if x.et == e.resType && x.s == e.resID {
		v, found, st := e.resourceAttr(name)
		return v, found, true, st
	}
	_, exists = e.p.entities[x.uid()]
	return value{}, false, exists, ok
}

func (e *evalEnv) principalAttr(name string) (value, bool) {
	if read, found := principalReads[name]; found {
		return read(e), true
	}
	return value{}, false
}

// principalReads are the principal's attributes by name: looked up once
// when a policy reading principal.name is compiled (direct), or per read
// when the entity is only known at run time (principalAttr).
var principalReads = map[string]func(e *evalEnv) value{
	"plan":   func(e *evalEnv) value { return value{k: kString, s: e.pe.pr.Plan} },
	"auth":   func(e *evalEnv) value { return value{k: kString, s: e.pe.pr.Auth} },
	"groups": func(e *evalEnv) value { return value{k: kSet, rep: setStrings, agg: &e.pe.groupSet} },
	"scopes": func(e *evalEnv) value { return value{k: kSet, rep: setStrings, agg: &e.pe.scopeSet} },
}

// contextReads are the context's fields by name, as principalReads.
var contextReads = map[string]func(e *evalEnv) value{
	"transport": func(e *evalEnv) value { return value{k: kString, s: e.transport} },
	"confirmed": func(e *evalEnv) value { return boolValue(e.confirmed) },
	"time":      func(e *evalEnv) value { return value{k: kLong, n: e.unix} },
	"arguments": func(e *evalEnv) value { return value{k: kRecord, rep: recJSON, agg: &e.args} },
}

// resourceAttr reads an attribute of the resource; its attributes were
// checked against their types (checkAttrs) when a policy reads it.
func (e *evalEnv) resourceAttr(name string) (value, bool, status) {
	if e.ti < 0 { // the server
		if name == "name" {
			return value{k: kString, s: e.p.model.Server}, true, ok
		}
		return value{}, false, ok
	}
	t, declared := e.resDecl[name]
	if !declared {
		return value{}, false, ok
	}
	return attrRead(t, e.resAttrs[name])
}

// slotRead is the attribute at j of the resource's, as loadAttrs or
// loadedAttrs checked and read them (every one fits its declared type t,
// or no policy is evaluated).
func (e *evalEnv) slotRead(_ AttrType, j int) (value, bool, status) {
	return e.res[j], true, ok
}

// attrRead is a resource attribute's value v as its declared type t reads
// it; a value that does not fit is left to Cedar.
func attrRead(t AttrType, v any) (value, bool, status) {
	switch x := v.(type) {
	case string:
		if t == String {
			return value{k: kString, s: x}, true, ok
		}
	case int64:
		if t == Long {
			return value{k: kLong, n: x}, true, ok
		}
	case int:
		if t == Long {
			return value{k: kLong, n: int64(x)}, true, ok
		}
	case bool:
		if t == Bool {
			return boolValue(x), true, ok
		}
	case []string:
		if t == StringSet {
			return value{k: kSet, rep: setStrings, agg: &aggregate{strs: x}}, true, ok
		}
	}
	return value{}, false, unsupported
}

// recordAttr reads a field of the context or of an object argument.
func (e *evalEnv) recordAttr(x value, name string) (value, bool, status) {
	if x.rep == recJSON {
		return recordField(x, name)
	}
	if read, found := contextReads[name]; found {
		return read(e), true, ok
	}
	return value{}, false, ok
}

// entityIn is `x in y` over the entity hierarchy: the principal is in its
// groups (and theirs), an action in its action groups, the resource in
// nothing but itself.
func (e *evalEnv) entityIn(x, y value) bool {
	if x.et == y.et && x.s == y.s {
		return true
	}
	switch {
	case x.et == userType && x.s == e.pe.pr.ID:
		return e.pe.in[y.uid()]
	case e.isResource(x):
		return false
	case x.et == e.pl.uid.Type && x.s == string(e.pl.uid.ID):
		return e.pl.in[y.uid()]
	}
	uid := x.uid()
	ent, exists := e.p.entities[uid]
	if !exists {
		return false
	}
	return e.p.ancestors(ent.Parents.Slice())[y.uid()]
}

func (e *evalEnv) isResource(x value) bool { return x.et == e.resType && x.s == e.resID }

// decideCompiled decides with the compiled policies; false when one of
// them meets a case it leaves to Cedar, or when more than maxCompiled
// policies are in play.
func (p *Policies) decideCompiled(pl *plan, ti int, pe *principalEntry, rs *toolRules, r *Request) (Decision, bool) {
	if len(rs.progs) > maxCompiled {
		return Decision{}, false
	}
	// closures are called through func values: env escapes, so it is kept
	// between decisions — the one this tool's last decision used, which
	// set finds as it left it, else one from the pool — and put back on
	// each return (not deferred: a panic loses one env to the collector,
	// nothing else)
	env := pl.parked.Swap(nil)
	if env == nil {
		env = envs.Get().(*evalEnv)
	}
	// the checks the Cedar path makes while building the request, reading
	// the values the policies then read from the env: every argument must
	// fit its type (else Cedar decides, and says why), and, when a policy
	// reads the resource, every attribute its type declares
	if pl.readsArgs {
		if r.ArgumentsValidated && pl.argsFixed {
			env.lazyArgs(len(pl.ctxArgs.names)) // they fit: read when a policy reads them
		} else if !env.loadArgs(&pl.ctxArgs, r.Arguments) {
			pl.park(env)
			return Decision{}, false
		}
	}
	if rs.reads.resource && ti >= 0 {
		al := pl.targets[ti]
		if i := env.resourceAttrs(al, &r.Resource); i >= 0 {
			pl.park(env)
			return attrDenial(al, i, r.Resource.Attrs), true
		}
	}
	env.set(p, pl, ti, pe, r)
	var permits, forbids, errs uint64 // bit i: rule i
	for i := range rs.progs {
		rl := &rs.progs[i]
		v, st := rl.prog(env)
		switch {
		case st == unsupported:
			pl.park(env)
			return Decision{}, false
		case st == failed: // Cedar skips the policy and reports it
			errs |= 1 << i
		case !v:
		case rl.forbid:
			forbids |= 1 << i
		default:
			permits |= 1 << i
		}
	}
	pl.park(env)
	switch {
	case errs != 0:
		return rs.decision(outcome{resError, errs}), true
	case forbids != 0:
		return rs.decision(outcome{resForbid, forbids}), true
	}
	return rs.decision(outcome{resPermit, permits}), true
}

// set fills the env for a request, field by field: a pooled env is on the
// heap, where each pointer written costs a write barrier while the
// collector runs, so what did not change since the env's last use is not
// written again. What an env holds after a decision is overwritten by the
// next; it keeps the last request's maps reachable until then, nothing
// more.
func (e *evalEnv) set(p *Policies, pl *plan, ti int, pe *principalEntry, r *Request) {
	if e.p != p {
		e.p = p
	}
	if e.pl != pl {
		e.pl = pl
		e.args.rt = &pl.ctxArgs
	}
	if e.pe != pe {
		e.pe = pe
	}
	e.ti = ti
	resType, resID, resAttrs, resDecl := types.EntityType(ServerType), p.model.Server, map[string]any(nil), map[string]AttrType(nil)
	if ti >= 0 {
		resType, resID, resAttrs, resDecl = types.EntityType(r.Resource.Type), r.Resource.ID, r.Resource.Attrs, pl.targets[ti].attrs
	}
	// a string equal to the one held, a map that is the one held, is not
	// written again: most calls in a row share them (a tool, a resource)
	if e.resType != resType {
		e.resType = resType
	}
	if e.resID != resID {
		e.resID = resID
	}
	if !sameMap(e.resAttrs, resAttrs) {
		e.resAttrs = resAttrs
	}
	if !sameMap(e.resDecl, resDecl) {
		e.resDecl = resDecl
	}
	if e.transport != r.Transport {
		e.transport = r.Transport
	}
	e.confirmed, e.unix = r.Confirmed, r.Time.Unix()
	if !sameMap(e.args.obj, r.Arguments) {
		e.args.obj = r.Arguments
	}
}

// sameMap reports whether a and b are the same map (not equal maps).
func sameMap[V any](a, b map[string]V) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

// sameValue reports whether a and b are the same interface value: the
// same dynamic type and the same data word (for a string or a slice, the
// same boxed header) — what a map returns again for an entry not changed.
func sameValue(a, b any) bool {
	type eface struct{ t, d unsafe.Pointer }
	return *(*eface)(unsafe.Pointer(&a)) == *(*eface)(unsafe.Pointer(&b))
}

// progRule is a rule's compiled form and effect: what a compiled decision
// reads of it, kept apart from the rest so that the rules in play are
// read from a few contiguous words.
type progRule struct {
	prog   cond
	forbid bool
}

// maxCompiled bounds the policies in play (for one principal and tool) a
// compiled decision evaluates: their results are bits of a word.
const maxCompiled = 64

var envs = sync.Pool{New: func() any { return new(evalEnv) }}

// attrDenial is the decision on a resource whose attribute i of al does
// not fit its type.
func attrDenial(al *attrList, i int, attrs map[string]any) Decision {
	_, err := attrValue(al.types[i], attrs[al.names[i]])
	return Decision{Reason: attrError(al.name, al.names[i], err).Error()}
}

// park keeps env for the tool's next decision, or puts it back in the
// pool when another decision parked one first.
func (pl *plan) park(env *evalEnv) {
	if !pl.parked.CompareAndSwap(nil, env) {
		envs.Put(env)
	}
}

const (
	resPermit uint8 = iota + 1
	resForbid
	resError
)

// outcome is what decides: the rules that failed, else those that
// forbid, else those that permit (none: no policy permits).
type outcome struct {
	kind uint8
	mask uint64
}

// decision is the Decision of an outcome, built once and then shared (a
// Decision's slices are never changed): a compiled decision allocates
// nothing once its outcome has been seen. The outcomes seen are a short
// list, copied on write, scanned in order: a tool's rules have a few
// outcomes, and comparing them is cheaper than hashing one.
func (rs *toolRules) decision(o outcome) Decision {
	old := rs.outcomes.Load()
	if old != nil {
		for i := range *old {
			if (*old)[i].o == o {
				return (*old)[i].d
			}
		}
	}
	var ids []string
	for i := range rs.rules {
		if o.mask&(1<<i) != 0 {
			ids = append(ids, string(rs.rules[i].id))
		}
	}
	slices.Sort(ids)
	var d Decision
	switch {
	case o.kind == resError:
		d = Decision{Policies: ids, Errors: ids, Reason: "a policy's evaluation failed: " + strings.Join(ids, ", ")}
	case o.kind == resForbid:
		d = Decision{Policies: ids, Reason: "forbidden by " + strings.Join(ids, ", ")}
	case o.mask != 0:
		d = Decision{Allow: true, Policies: ids}
	default:
		d = Decision{Reason: "no policy permits it"}
	}
	if old == nil || len(*old) < maxOutcomes {
		var l []outcomeDecision
		if old != nil {
			l = slices.Clip(*old)
		}
		l = append(l, outcomeDecision{o, d}) // a new array: readers of old are undisturbed
		rs.outcomes.CompareAndSwap(old, &l)  // a lost race loses only a cached entry
	}
	return d
}

// outcomeDecision is an outcome seen and its Decision.
type outcomeDecision struct {
	o outcome
	d Decision
}

// maxOutcomes bounds the decisions a toolRules keeps.
const maxOutcomes = 64

// loadArgs checks the arguments against their record type, as
// recordType.check does, keeping each field's value (nil: absent or null)
// in argVals, in the order of rt.names, for argumentRead; false when one
// does not fit.
func (e *evalEnv) loadArgs(rt *recordType, obj map[string]any) bool {
	e.argLazy = false
	vals := e.argVals[:0]
	for i, name := range rt.names {
		fv := obj[name]
		if fv == nil {
			if !rt.list[i].optional {
				return false
			}
		} else if !rt.list[i].t.check(fv) {
			return false
		}
		vals = append(vals, fv)
	}
	e.argVals = vals
	return true
}

// lazyArgs readies the env for n arguments that fit their types (the
// kernel validated them, and their types are fixed by the schema): arg
// reads each from the request's map when a policy first reads it.
func (e *evalEnv) lazyArgs(n int) {
	if cap(e.argVals) < n {
		e.argVals = make([]any, n)
	}
	e.argVals, e.argLazy, e.argRead = e.argVals[:n], true, 0
}

// arg is the argument at j of the names of the tool's arguments (nil:
// absent or null).
func (e *evalEnv) arg(j int) any {
	if e.argLazy && e.argRead&(1<<uint(j)) == 0 {
		e.argVals[j] = e.args.obj[e.pl.ctxArgs.names[j]]
		e.argRead |= 1 << uint(j)
	}
	return e.argVals[j]
}

// resourceAttrs checks a resource's attributes against its type (al), as
// resource does when it builds the entity, without building it, and reads
// them as policies read them (env.res): a cached resource's once per
// entry and attribute list (loadedAttrs), any other on every call
// (loadAttrs). It returns the index of the first that does not fit, or -1.
func (e *evalEnv) resourceAttrs(al *attrList, r *Resource) int {
	f := r.from
	if f == nil || !sameMap(f.res.Attrs, r.Attrs) { // not the entry's own map: a resolver's
		return e.loadAttrs(al, r.Attrs)
	}
	l := f.loaded.Load()
	if l == nil || l.al != al {
		l = &loadedAttrs{al: al, bad: -1}
		l.vals, l.bad = readAttrs(al, r.Attrs, nil, nil)
		f.loaded.Store(l) // a race stores the same values
	}
	e.res = l.vals
	return l.bad
}

// loadedAttrs is a cached resource's attributes as resourceAttrs checked
// and read them for al: immutable once stored.
type loadedAttrs struct {
	al   *attrList
	vals []value
	bad  int
}

// loadAttrs is resourceAttrs into the env's own buffers (resVals, and
// resSets for sets): it allocates nothing once they have grown.
func (e *evalEnv) loadAttrs(al *attrList, attrs map[string]any) int {
	if len(e.resSets) < len(al.decl) {
		e.resSets = make([]aggregate, len(al.decl))
	}
	var bad int
	e.resVals, bad = readAttrs(al, attrs, e.resVals[:0], e.resSets)
	e.res = e.resVals
	return bad
}

// readAttrs appends to vals each attribute of al.decl read from attrs
// (attrRead), up to the first that does not fit its type, whose index it
// returns (else -1). A set's contents are held in sets[j] when sets is
// given, else in a new aggregate.
func readAttrs(al *attrList, attrs map[string]any, vals []value, sets []aggregate) ([]value, int) {
	for i := range al.decl {
		t, v := al.decl[i].t, attrs[al.decl[i].name]
		if !attrFits(t, v) {
			return vals, i
		}
		if x, isSet := v.([]string); isSet && sets != nil {
			a := &sets[i]
			a.strs = x
			vals = append(vals, value{k: kSet, rep: setStrings, agg: a})
			continue
		}
		fv, _, _ := attrRead(t, v) // it fits
		vals = append(vals, fv)
	}
	return vals, -1
}

func attrFits(t AttrType, v any) bool {
	switch v.(type) {
	case string:
		return t == String
	case int64, int:
		return t == Long
	case bool:
		return t == Bool
	case []string:
		return t == StringSet
	}
	return false
}
