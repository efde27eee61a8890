package authz

import (
	"slices"
	"strings"
	"sync"

	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
)

func (c *compiler) access(n xast.IsNode, name string) expr {
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

func (c *compiler) has(n xast.IsNode, name string) expr {
	f := c.compile(n)
	return func(e *evalEnv) (value, status) {
		x, st := f(e)
		if st != ok {
			return value{}, st
		}
		found := false
		switch x.k {
		case kEntity:
			_, found, _, st = e.entityAttr(x, name) // an entity that does not exist has nothing
		case kRecord:
			_, found, st = e.recordAttr(x, name)
		default:
			return value{}, failed
		}
		if st != ok {
			return value{}, st
		}
		return boolValue(found), ok
	}
}

// entityAttr reads an attribute of an entity, looked up as the request's
// entities are (requestEntities): the principal, the resource, then the
// file's entities and the actions, which have no attributes.
func (e *evalEnv) entityAttr(x value, name string) (v value, found, exists bool, st status) {
	if x.et == "" && x.s == "" {
		return value{}, false, false, ok // the unspecified entity: an error to read
	}
	if x.et == userType && x.s == e.r.Principal.ID {
		v, found := e.principalAttr(name)
		return v, found, true, ok
	}
	if t, id := e.resourceUID(); x.et == t && x.s == id {
		v, found, st := e.resourceAttr(name)
		return v, found, true, st
	}
	_, exists = e.p.entities[x.uid()]
	return value{}, false, exists, ok
}

func (e *evalEnv) principalAttr(name string) (value, bool) {
	pr := &e.r.Principal
	switch name {
	case "plan":
		return value{k: kString, s: pr.Plan}, true
	case "auth":
		return value{k: kString, s: pr.Auth}, true
	case "groups":
		return value{k: kSet, rep: setStrings, strs: e.pe.groups}, true
	case "scopes":
		return value{k: kSet, rep: setStrings, strs: pr.Scopes}, true
	}
	return value{}, false
}

// resourceAttr reads an attribute of the resource; its attributes were
// checked against their types (checkAttrs) when a policy reads it.
func (e *evalEnv) resourceAttr(name string) (value, bool, status) {
	r := &e.r.Resource
	if r.Type == "" || r.Type == ServerType {
		if name == "name" {
			return value{k: kString, s: e.p.model.Server}, true, ok
		}
		return value{}, false, ok
	}
	t, declared := e.p.resTypes[r.Type].Attrs[name]
	if !declared {
		return value{}, false, ok
	}
	switch x := r.Attrs[name].(type) {
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
			return value{k: kSet, rep: setStrings, strs: x}, true, ok
		}
	}
	return value{}, false, unsupported
}

// recordAttr reads a field of the context or of an object argument.
func (e *evalEnv) recordAttr(x value, name string) (value, bool, status) {
	if x.rep == recJSON {
		return recordField(x, name)
	}
	switch name {
	case "transport":
		return value{k: kString, s: e.r.Transport}, true, ok
	case "confirmed":
		return boolValue(e.r.Confirmed), true, ok
	case "time":
		return value{k: kLong, n: e.r.Time.Unix()}, true, ok
	case "arguments":
		return value{k: kRecord, rep: recJSON, obj: e.r.Arguments, rt: e.args}, true, ok
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
	case x.et == userType && x.s == e.r.Principal.ID:
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

func (e *evalEnv) isResource(x value) bool {
	t, id := e.resourceUID()
	return x.et == t && x.s == id
}

// decideCompiled decides with the compiled policies; false when one of
// them meets a case it leaves to Cedar.
func (p *Policies) decideCompiled(pl *plan, pe *principalEntry, rs *toolRules, r *Request) (Decision, bool) {
	env := envs.Get().(*evalEnv) // closures are called through func values: env escapes, so it is pooled
	*env = evalEnv{p: p, pl: pl, pe: pe, r: *r, args: pl.ctxArgs}
	defer func() { *env = evalEnv{}; envs.Put(env) }()
	var small [16]uint8
	res := small[:0]
	if len(rs.rules) > len(small) {
		res = make([]uint8, 0, len(rs.rules))
	}
	var nForbid, nPermit, nErr int
	for i := range rs.rules {
		rl := &rs.rules[i]
		v, st := rl.prog(env)
		switch {
		case st == unsupported:
			return Decision{}, false
		case st == failed || v.k != kBool:
			res = append(res, resError)
			nErr++
		case v.n == 0:
			res = append(res, resNone)
		case rl.forbid:
			res = append(res, resForbid)
			nForbid++
		default:
			res = append(res, resPermit)
			nPermit++
		}
	}
	switch {
	case nErr > 0:
		ids := rs.ids(res, resError, nErr)
		return Decision{Policies: ids, Errors: ids, Reason: "a policy's evaluation failed: " + strings.Join(ids, ", ")}, true
	case nForbid > 0:
		ids := rs.ids(res, resForbid, nForbid)
		return Decision{Policies: ids, Reason: "forbidden by " + strings.Join(ids, ", ")}, true
	case nPermit > 0:
		return Decision{Allow: true, Policies: rs.ids(res, resPermit, nPermit)}, true
	}
	return Decision{Reason: "no policy permits it"}, true
}

var envs = sync.Pool{New: func() any { return new(evalEnv) }}

const (
	resNone uint8 = iota
	resPermit
	resForbid
	resError
)

// ids are the sorted ids of the rules whose result is want; one is a
// shared slice (a Decision's slices are never changed).
func (rs *toolRules) ids(res []uint8, want uint8, n int) []string {
	if n == 1 {
		return rs.rules[slices.Index(res, want)].idOnly
	}
	ids := make([]string, 0, n)
	for i, x := range res {
		if x == want {
			ids = append(ids, string(rs.rules[i].id))
		}
	}
	slices.Sort(ids)
	return ids
}

// checkAttrs checks a resource's attributes against its type, as
// resource does when it builds the entity, without building it.
func (p *Policies) checkAttrs(r Resource) error {
	if r.Type == "" || r.Type == ServerType {
		return nil
	}
	rt := p.resTypes[r.Type]
	for _, name := range p.attrNames[r.Type] {
		if !attrFits(rt.Attrs[name], r.Attrs[name]) {
			_, err := attrValue(rt.Attrs[name], r.Attrs[name])
			return attrError(r.Type, name, err)
		}
	}
	return nil
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
