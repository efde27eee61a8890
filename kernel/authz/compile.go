package authz

import (
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
)

// Policies are parsed and validated by cedar-go. At load, each policy's
// AST is also compiled into Go closures that evaluate it directly against
// the Request — the principal's cached entry, the tool's plan, the
// resource's attributes, the arguments as decoded from JSON — so that a
// decision builds no Cedar record, set or entity. The compiled form
// covers a subset of Cedar and follows cedar-go's evaluator
// (internal/eval) exactly, errors included: && and || short-circuit and
// require booleans, if-then-else, ==, != across types, <, <=, >, >= on
// Longs only, +, -, * and negation with overflow as an error, like,
// has, attribute access (a missing attribute or entity is an error), in
// over the entity hierarchy, is, is-in, contains, containsAll,
// containsAny, isEmpty, set literals. A policy using anything else —
// extension functions (decimal, ip, datetime, duration), record
// literals, tags — is not compiled, and a decision that puts such a policy
// in play is made by cedar.Authorize, as is one that meets a case the
// compiled form leaves to Cedar at run time (record equality, a set
// operation over more than maxPairs element pairs), or that has more than
// maxCompiled policies in play. TestCompiledMatchesCedar and
// FuzzCompiledMatchesCedar hold the two to the same decisions.

// evalEnv is what a compiled policy reads: the request's fields a policy
// can read, set one by one (the principal's are its entry's, pe.pr), so
// that a decision writes a few words rather than a copy of the Request.
type evalEnv struct {
	p  *Policies
	pl *plan
	pe *principalEntry
	// the resource, with the server in place of the zero Resource; ti is
	// its type's index in pl.targets, -1 for the server
	ti       int
	resType  types.EntityType
	resID    string
	resAttrs map[string]any
	resDecl  map[string]AttrType // the resource type's declared attributes
	// the context
	transport string
	confirmed bool
	unix      int64
	// the record a policy reads most, kept here so that reading it
	// allocates nothing (the principal's sets are its entry's)
	args aggregate
	// the arguments' values, in the order of their names, as loadArgs
	// checked them or, with argLazy, as arg reads them when a policy first
	// does (bit j of argRead: argVals[j] is read)
	argVals []any
	argLazy bool
	argRead uint64
	// res are the resource's attributes as policies read them, in the
	// order of their names, checked against their declared types: resVals
	// (loadAttrs) or a cached resource's (loadedAttrs)
	res     []value
	resVals []value
	// resSets[j] holds resVals[j] when it is a set: loading a set
	// attribute allocates nothing (the values that point here live only
	// while the policies are evaluated)
	resSets []aggregate
}

type expr func(e *evalEnv) (value, status)

// cond is an expression whose value is a Bool: the conditions a policy
// is made of, evaluated without carrying a value. A Cedar error (an
// operand of the wrong type included) is failed, as for expr.
type cond func(e *evalEnv) (bool, status)

// exprOf is a cond as an expr.
func exprOf(f cond) expr {
	return func(e *evalEnv) (value, status) {
		b, st := f(e)
		if st != ok {
			return value{}, st
		}
		return boolValue(b), ok
	}
}

// condOf is an expr that must give a Bool as a cond: any other value is
// an error (failure).
func condOf(f expr) cond {
	return func(e *evalEnv) (bool, status) {
		x, st := f(e)
		if st != ok || x.k != kBool {
			return false, failure(st)
		}
		return x.n != 0, ok
	}
}

// compilePolicy compiles a policy the way cedar-go does: its scope,
// then its conditions (unless negated), joined by &&. ok is false when
// the policy uses something outside the compiled subset.
//
// The principal and action scopes are left out when they are of a kind
// principalScopeMatches and actionScopeMatches decide exactly: a policy is
// evaluated only for the principals and tools those found it applies to
// (toolRules), for which Cedar's scope test is true and cannot fail.
//
// It is compiled for one tool (pl) of one policy set (p): what the tool
// fixes — the action, the types of its arguments and of its targets'
// attributes — is looked up here rather than on every decision.
func compilePolicy(pol *xast.Policy, p *Policies, pl *plan) (_ cond, size int, fits bool) {
	var parts []xast.IsNode
	if _, all := pol.Principal.(xast.ScopeTypeAll); !all && !decidedScope(pol.Principal) {
		parts = append(parts, scopeNode(xast.NewPrincipalNode(), pol.Principal))
	}
	if _, all := pol.Action.(xast.ScopeTypeAll); !all && !decidedScope(pol.Action) {
		parts = append(parts, scopeNode(xast.NewActionNode(), pol.Action))
	}
	if _, all := pol.Resource.(xast.ScopeTypeAll); !all {
		parts = append(parts, scopeNode(xast.NewResourceNode(), pol.Resource))
	}
	for _, c := range pol.Conditions {
		if c.Condition == xast.ConditionUnless {
			parts = append(parts, xast.NodeTypeNot{UnaryNode: xast.UnaryNode{Arg: c.Body}})
			continue
		}
		parts = append(parts, c.Body)
	}
	if len(parts) == 0 {
		return func(*evalEnv) (bool, status) { return true, ok }, 1, true
	}
	node := parts[len(parts)-1]
	for i := len(parts) - 2; i >= 0; i-- {
		node = xast.NodeTypeAnd{BinaryNode: xast.BinaryNode{Left: parts[i], Right: node}}
	}
	c := compiler{p: p, pl: pl}
	f := c.cond(node)
	return f, c.nodes, !c.outside
}

// cond compiles a node that must evaluate to a Bool (a policy's
// condition, an operand of &&, || or !): the boolean operators,
// comparisons, like, has and is produce the Bool itself; any other node
// is compiled as an expr and its value checked.
func (c *compiler) cond(n xast.IsNode) cond {
	switch v := n.(type) {
	case xast.NodeTypeAnd:
		c.nodes++
		lf, rf := c.cond(v.Left), c.cond(v.Right)
		return func(e *evalEnv) (bool, status) {
			x, st := lf(e)
			if st != ok || !x {
				return false, st
			}
			return rf(e)
		}
	case xast.NodeTypeOr:
		c.nodes++
		lf, rf := c.cond(v.Left), c.cond(v.Right)
		return func(e *evalEnv) (bool, status) {
			x, st := lf(e)
			if st != ok || x {
				return x, st
			}
			return rf(e)
		}
	case xast.NodeTypeNot:
		c.nodes++
		arg := c.cond(v.Arg)
		return func(e *evalEnv) (bool, status) {
			x, st := arg(e)
			return !x && st == ok, st
		}
	case xast.NodeTypeEquals:
		c.nodes++
		return c.equals(v.Left, v.Right, false)
	case xast.NodeTypeNotEquals:
		c.nodes++
		return c.equals(v.Left, v.Right, true)
	case xast.NodeTypeLike:
		c.nodes++
		return c.like(v)
	case xast.NodeTypeHas:
		c.nodes++
		return c.has(v.Arg, string(v.Value))
	case xast.NodeTypeIs:
		c.nodes++
		return c.is(v.Left, v.EntityType)
	}
	return condOf(c.compile(n))
}

// decidedScope reports whether the pre-filter decides a principal or
// action scope of this kind exactly.
func decidedScope(scope xast.IsScopeNode) bool {
	switch scope.(type) {
	case xast.ScopeTypeEq, xast.ScopeTypeIn, xast.ScopeTypeInSet, xast.ScopeTypeIs, xast.ScopeTypeIsIn:
		return true
	}
	return false
}

// scopeNode is a scope as an expression on its variable, as cedar-go
// builds it; nil for a scope this code does not know (not compiled).
func scopeNode(v xast.NodeTypeVariable, scope xast.IsScopeNode) xast.IsNode {
	switch sc := scope.(type) {
	case xast.ScopeTypeEq:
		return xast.NodeTypeEquals{BinaryNode: xast.BinaryNode{Left: v, Right: xast.NodeValue{Value: sc.Entity}}}
	case xast.ScopeTypeIn:
		return xast.NodeTypeIn{BinaryNode: xast.BinaryNode{Left: v, Right: xast.NodeValue{Value: sc.Entity}}}
	case xast.ScopeTypeInSet:
		vals := make([]types.Value, len(sc.Entities))
		for i, e := range sc.Entities {
			vals[i] = e
		}
		return xast.NodeTypeIn{BinaryNode: xast.BinaryNode{Left: v, Right: xast.NodeValue{Value: types.NewSet(vals...)}}}
	case xast.ScopeTypeIs:
		return xast.NodeTypeIs{Left: v, EntityType: sc.Type}
	case xast.ScopeTypeIsIn:
		return xast.NodeTypeIsIn{NodeTypeIs: xast.NodeTypeIs{Left: v, EntityType: sc.Type}, Entity: xast.NodeValue{Value: sc.Entity}}
	}
	return nil
}

type compiler struct {
	outside bool
	nodes   int
	p       *Policies
	pl      *plan // the tool compiled for
}

func (c *compiler) out() expr {
	c.outside = true
	return func(*evalEnv) (value, status) { return value{}, unsupported }
}

func (c *compiler) compile(n xast.IsNode) expr {
	c.nodes++
	switch v := n.(type) {
	case xast.NodeValue:
		lit, isLit := literal(v.Value)
		if !isLit {
			return c.out()
		}
		return func(*evalEnv) (value, status) { return lit, ok }
	case xast.NodeTypeVariable:
		return c.variable(v)
	case xast.NodeTypeSet:
		return c.set(v)
	case xast.NodeTypeAnd, xast.NodeTypeOr, xast.NodeTypeNot, xast.NodeTypeEquals, xast.NodeTypeNotEquals, xast.NodeTypeLike,
		xast.NodeTypeHas, xast.NodeTypeIs:
		c.nodes-- // cond counts it
		return exprOf(c.cond(n))
	case xast.NodeTypeIfThenElse:
		return c.ifThenElse(v)
	case xast.NodeTypeLessThan:
		return c.longs(v.Left, v.Right, func(a, b int64) (value, bool) { return boolValue(a < b), true })
	case xast.NodeTypeLessThanOrEqual:
		return c.longs(v.Left, v.Right, func(a, b int64) (value, bool) { return boolValue(a <= b), true })
	case xast.NodeTypeGreaterThan:
		return c.longs(v.Left, v.Right, func(a, b int64) (value, bool) { return boolValue(a > b), true })
	case xast.NodeTypeGreaterThanOrEqual:
		return c.longs(v.Left, v.Right, func(a, b int64) (value, bool) { return boolValue(a >= b), true })
	case xast.NodeTypeAdd:
		return c.longs(v.Left, v.Right, addLong)
	case xast.NodeTypeSub:
		return c.longs(v.Left, v.Right, subLong)
	case xast.NodeTypeMult:
		return c.longs(v.Left, v.Right, mulLong)
	case xast.NodeTypeNegate:
		return c.negate(v.Arg)
	case xast.NodeTypeAccess:
		return c.access(v.Arg, string(v.Value))
	case xast.NodeTypeIn:
		return c.in(v.Left, v.Right)
	case xast.NodeTypeIsIn:
		return c.isIn(v)
	case xast.NodeTypeContains:
		return c.sets(v.Left, v.Right, false, contains)
	case xast.NodeTypeContainsAll:
		return c.sets(v.Left, v.Right, true, containsAll)
	case xast.NodeTypeContainsAny:
		return c.sets(v.Left, v.Right, true, containsAny)
	case xast.NodeTypeIsEmpty:
		arg := c.compile(v.Arg)
		return func(e *evalEnv) (value, status) {
			s, st := arg(e)
			if st != ok || s.k != kSet {
				return value{}, failure(st)
			}
			return boolValue(s.setLen() == 0), ok
		}
	}
	return c.out() // extension calls, record literals, tags, a nil scope
}

// failure is the status of an operation whose operand evaluated with st
// or had the wrong type: a Cedar error unless the operand itself was left
// to Cedar.
func failure(st status) status {
	if st == unsupported {
		return unsupported
	}
	return failed
}

// constant is the value of a literal node that compile accepts.
func (c *compiler) constant(n xast.IsNode) (value, bool) {
	if v, isLit := n.(xast.NodeValue); isLit {
		return literal(v.Value)
	}
	return value{}, false
}

func (c *compiler) variable(v xast.NodeTypeVariable) expr {
	switch v.Name {
	case "principal":
		return func(e *evalEnv) (value, status) {
			return value{k: kEntity, et: userType, s: e.pe.pr.ID}, ok
		}
	case "action":
		action := value{k: kEntity, et: c.pl.uid.Type, s: string(c.pl.uid.ID)}
		return func(*evalEnv) (value, status) { return action, ok }
	case "resource":
		return func(e *evalEnv) (value, status) {
			return value{k: kEntity, et: e.resType, s: e.resID}, ok
		}
	case "context":
		return func(*evalEnv) (value, status) { return value{k: kRecord, rep: recContext}, ok }
	}
	return c.out()
}

func (c *compiler) set(v xast.NodeTypeSet) expr {
	elems := make([]expr, len(v.Elements))
	constant := &aggregate{}
	for i, el := range v.Elements {
		elems[i] = c.compile(el)
		if lit, isLit := el.(xast.NodeValue); isLit && constant != nil {
			if x, fits := literal(lit.Value); fits {
				constant.vals = append(constant.vals, x)
				continue
			}
		}
		constant = nil
	}
	if constant != nil {
		return func(*evalEnv) (value, status) { return value{k: kSet, rep: setValues, agg: constant}, ok }
	}
	return func(e *evalEnv) (value, status) {
		out := value{k: kSet, rep: setValues, agg: &aggregate{vals: make([]value, len(elems))}}
		for i, el := range elems {
			x, st := el(e)
			if st != ok {
				return value{}, st
			}
			out.agg.vals[i] = x
		}
		return out, ok
	}
}

func (c *compiler) ifThenElse(v xast.NodeTypeIfThenElse) expr {
	cf, tf, ef := c.compile(v.If), c.compile(v.Then), c.compile(v.Else)
	return func(e *evalEnv) (value, status) {
		x, st := cf(e)
		if st != ok || x.k != kBool {
			return value{}, failure(st)
		}
		if x.n != 0 {
			return tf(e)
		}
		return ef(e)
	}
}

func (c *compiler) equals(l, r xast.IsNode, negate bool) cond {
	lf, rf := c.compile(l), c.compile(r)
	// a literal operand is a constant: no call to read it, and evaluating
	// it first or not at all cannot fail
	if lit, isLit := c.constant(r); isLit {
		if sr := c.stringRead(l); sr != nil && lit.k == kString {
			return func(e *evalEnv) (bool, status) {
				x, st := sr(e)
				if st != ok {
					return false, st
				}
				return (x == lit.s) != negate, ok
			}
		}
		if lit.k == kString {
			return func(e *evalEnv) (bool, status) {
				x, st := lf(e)
				if st != ok {
					return false, st
				}
				return (x.k == kString && x.s == lit.s) != negate, ok
			}
		}
		return func(e *evalEnv) (bool, status) {
			x, st := lf(e)
			if st != ok {
				return false, st
			}
			eq, st := equal(x, lit)
			return eq != negate && st == ok, st
		}
	}
	if lit, isLit := c.constant(l); isLit {
		return func(e *evalEnv) (bool, status) {
			y, st := rf(e)
			if st != ok {
				return false, st
			}
			eq, st := equal(lit, y)
			return eq != negate && st == ok, st
		}
	}
	return func(e *evalEnv) (bool, status) {
		x, st := lf(e)
		if st != ok {
			return false, st
		}
		y, st := rf(e)
		if st != ok {
			return false, st
		}
		eq, st := equal(x, y)
		return eq != negate && st == ok, st
	}
}

// longs is a binary operation on two Longs: a comparison or checked
// arithmetic (false: overflow, an error).
func (c *compiler) longs(l, r xast.IsNode, op func(a, b int64) (value, bool)) expr {
	lf, rf := c.compile(l), c.compile(r)
	return func(e *evalEnv) (value, status) {
		x, st := lf(e)
		if st != ok || x.k != kLong {
			return value{}, failure(st)
		}
		y, st := rf(e)
		if st != ok || y.k != kLong {
			return value{}, failure(st)
		}
		res, fine := op(x.n, y.n)
		if !fine {
			return value{}, failed
		}
		return res, ok
	}
}

// Checked arithmetic, as cedar-go does it.
func addLong(a, b int64) (value, bool) {
	r := a + b
	return value{k: kLong, n: r}, (r > a) == (b > 0)
}

func subLong(a, b int64) (value, bool) {
	r := a - b
	return value{k: kLong, n: r}, (r > a) == (b < 0)
}

func mulLong(a, b int64) (value, bool) {
	if a == 0 || b == 0 {
		return value{k: kLong}, true
	}
	r := a * b
	if (r < 0) != ((a < 0) != (b < 0)) || r/a != b {
		return value{}, false
	}
	return value{k: kLong, n: r}, true
}

func (c *compiler) negate(n xast.IsNode) expr {
	f := c.compile(n)
	return func(e *evalEnv) (value, status) {
		x, st := f(e)
		if st != ok || x.k != kLong {
			return value{}, failure(st)
		}
		if x.n == -1<<63 {
			return value{}, failed
		}
		return value{k: kLong, n: -x.n}, ok
	}
}

// like matches as cedar-go's own Pattern.Match does (patternMatcher).
func (c *compiler) like(v xast.NodeTypeLike) cond {
	f, match := c.compile(v.Arg), patternMatcher(v.Value)
	if sr := c.stringRead(v.Arg); sr != nil {
		return func(e *evalEnv) (bool, status) {
			x, st := sr(e)
			if st != ok {
				return false, failure(st)
			}
			return match(x), ok
		}
	}
	return func(e *evalEnv) (bool, status) {
		x, st := f(e)
		if st != ok || x.k != kString {
			return false, failure(st)
		}
		return match(x.s), ok
	}
}

func (c *compiler) sets(l, r xast.IsNode, bothSets bool, op func(a, b value) (bool, status)) expr {
	lf, rf := c.compile(l), c.compile(r)
	return func(e *evalEnv) (value, status) {
		x, st := lf(e)
		if st != ok || x.k != kSet {
			return value{}, failure(st)
		}
		y, st := rf(e)
		if st != ok || bothSets && y.k != kSet {
			return value{}, failure(st)
		}
		res, st := op(x, y)
		if st != ok {
			return value{}, st
		}
		return boolValue(res), ok
	}
}

func (c *compiler) is(l xast.IsNode, t types.EntityType) cond {
	f := c.compile(l)
	if v, isVar := l.(xast.NodeTypeVariable); isVar && v.Name == "resource" { // its type, without building its value
		return func(e *evalEnv) (bool, status) { return e.resType == t, ok }
	}
	return func(e *evalEnv) (bool, status) {
		x, st := f(e)
		if st != ok || x.k != kEntity {
			return false, failure(st)
		}
		return x.et == t, ok
	}
}

func (c *compiler) isIn(v xast.NodeTypeIsIn) expr {
	lf, rf, t := c.compile(v.Left), c.compile(v.Entity), v.EntityType
	return func(e *evalEnv) (value, status) {
		x, st := lf(e)
		if st != ok || x.k != kEntity {
			return value{}, failure(st)
		}
		if x.et != t {
			return boolValue(false), ok // the entity is not evaluated
		}
		y, st := rf(e)
		if st != ok {
			return value{}, st
		}
		return e.inValue(x, y)
	}
}

func (c *compiler) in(l, r xast.IsNode) expr {
	lf, rf := c.compile(l), c.compile(r)
	return func(e *evalEnv) (value, status) {
		x, st := lf(e)
		if st != ok || x.k != kEntity {
			return value{}, failure(st)
		}
		y, st := rf(e)
		if st != ok {
			return value{}, st
		}
		return e.inValue(x, y)
	}
}

// inValue is `x in y` for an entity x: y an entity, or a set of entities
// (any other element is an error, even after a match).
func (e *evalEnv) inValue(x, y value) (value, status) {
	switch y.k {
	case kEntity:
		return boolValue(e.entityIn(x, y)), ok
	case kSet:
		found := false
		for i := range y.setLen() {
			g, st := y.setElem(i)
			if st != ok || g.k != kEntity {
				return value{}, failure(st)
			}
			found = found || e.entityIn(x, g)
		}
		return boolValue(found), ok
	}
	return value{}, failed
}
