package authz

import (
	"github.com/cedar-policy/cedar-go/types"
)

// The compiled evaluator (compile.go) works on values read straight from
// a Request: no Cedar record or set is built for a decision. A value is
// one of Cedar's types; sets and records point at the request's own data.

type kind uint8

const (
	kBool kind = iota + 1
	kLong
	kString
	kEntity
	kSet
	kRecord
)

// status is the outcome of evaluating an expression: a value, a Cedar
// evaluation error (the policy is skipped and reported, as Cedar does), or
// a case the compiled form does not handle, which sends the whole decision
// to cedar.Authorize.
type status uint8

const (
	ok status = iota
	failed
	unsupported
)

// Set and record representations.
const (
	setStrings uint8 = iota + 1 // strs: principal.groups, principal.scopes, a Set<String> attribute
	setJSON                     // arr: an array argument, elements of type elem
	setValues                   // vals: a set literal
	recContext                  // the request's context
	recJSON                     // obj: an object argument, of type rt
)

type value struct {
	k   kind
	rep uint8
	n   int64 // a Long; a Bool is 0 or 1
	s   string
	et  types.EntityType // an entity's type; its id is s
	agg *aggregate       // a set's or a record's contents (nil for the context)
}

// aggregate holds a set or a record apart, so that a value stays small:
// closures return values, and most are not sets.
type aggregate struct {
	strs []string
	arr  []any
	elem cedarType
	vals []value
	obj  map[string]any
	rt   *recordType
}

func boolValue(b bool) value {
	if b {
		return value{k: kBool, n: 1}
	}
	return value{k: kBool}
}

func (v value) uid() types.EntityUID { return types.NewEntityUID(v.et, types.String(v.s)) }

// maxPairs bounds the element comparisons of one set operation (set
// equality, containsAll, containsAny compare every pair): beyond it the
// decision goes to Cedar, whose sets are hashed.
const maxPairs = 1 << 12

func (v value) setLen() int {
	switch v.rep {
	case setStrings:
		return len(v.agg.strs)
	case setJSON:
		return len(v.agg.arr)
	}
	return len(v.agg.vals)
}

func (v value) setElem(i int) (value, status) {
	switch v.rep {
	case setStrings:
		return value{k: kString, s: v.agg.strs[i]}, ok
	case setJSON:
		return jsonValue(v.agg.elem, v.agg.arr[i])
	}
	return v.agg.vals[i], ok
}

// jsonValue is an argument's value as its Cedar type t reads it; the
// arguments were checked against their types before (recordType.check).
func jsonValue(t cedarType, x any) (value, status) {
	switch t := t.(type) {
	case primType:
		switch t {
		case "String":
			if s, isS := x.(string); isS {
				return value{k: kString, s: s}, ok
			}
		case "Bool":
			if b, isB := x.(bool); isB {
				return boolValue(b), ok
			}
		case "Long":
			if t.check(x) {
				return value{k: kLong, n: int64(x.(float64))}, ok
			}
		}
	case setType:
		if a, isA := x.([]any); isA {
			return value{k: kSet, rep: setJSON, agg: &aggregate{arr: a, elem: t.elem}}, ok
		}
	case recordType:
		if m, isM := x.(map[string]any); isM || x == nil {
			ra := &recordAgg{rt: t} // one allocation for the record and its type
			ra.agg = aggregate{obj: m, rt: &ra.rt}
			return value{k: kRecord, rep: recJSON, agg: &ra.agg}, ok
		}
	}
	return value{}, unsupported // not what the check let through: let Cedar say
}

// recordAgg is an object argument's aggregate with its record type.
type recordAgg struct {
	agg aggregate
	rt  recordType
}

// recordField reads a field of an object argument: absent and null fields
// are not in the record.
func recordField(v value, name string) (value, bool, status) {
	f, declared := v.agg.rt.fields[name]
	if !declared {
		return value{}, false, ok
	}
	x, present := v.agg.obj[name]
	if !present || x == nil {
		return value{}, false, ok
	}
	fv, st := jsonValue(f.t, x)
	return fv, true, st
}

// equal is Cedar's ==: values of different types are unequal, sets are
// equal when each holds every element of the other.
func equal(a, b value) (bool, status) {
	if a.k != b.k {
		return false, ok
	}
	switch a.k {
	case kBool, kLong:
		return a.n == b.n, ok
	case kString:
		return a.s == b.s, ok
	case kEntity:
		return a.et == b.et && a.s == b.s, ok
	case kSet:
		if a.setLen()*b.setLen() > maxPairs {
			return false, unsupported
		}
		in, st := containsAll(a, b)
		if st != ok || !in {
			return false, st
		}
		return containsAll(b, a)
	}
	return false, unsupported // records: left to Cedar
}

// contains reports whether set s has an element equal to x.
func contains(s, x value) (bool, status) {
	for i := range s.setLen() {
		e, st := s.setElem(i)
		if st != ok {
			return false, st
		}
		if eq, st := equal(e, x); st != ok || eq {
			return eq, st
		}
	}
	return false, ok
}

// containsAll reports whether a holds every element of b.
func containsAll(a, b value) (bool, status) { return containsEach(a, b, true) }

// containsAny reports whether a holds some element of b.
func containsAny(a, b value) (bool, status) { return containsEach(a, b, false) }

// containsEach looks for b's elements in a: every one of them (all), or
// some one (!all). It stops at the first element that decides.
func containsEach(a, b value, all bool) (bool, status) {
	if a.setLen()*b.setLen() > maxPairs {
		return false, unsupported
	}
	for i := range b.setLen() {
		e, st := b.setElem(i)
		if st != ok {
			return false, st
		}
		if in, st := contains(a, e); st != ok || in != all {
			return in && st == ok, st
		}
	}
	return all, ok
}

// literal converts a constant of the policy; false for a type the
// compiled form does not handle (records, extension values).
func literal(v types.Value) (value, bool) {
	switch x := v.(type) {
	case types.Boolean:
		return boolValue(bool(x)), true
	case types.Long:
		return value{k: kLong, n: int64(x)}, true
	case types.String:
		return value{k: kString, s: string(x)}, true
	case types.EntityUID:
		return value{k: kEntity, et: x.Type, s: string(x.ID)}, true
	case types.Set:
		out := value{k: kSet, rep: setValues, agg: &aggregate{}}
		for e := range x.All() {
			ev, isLit := literal(e)
			if !isLit {
				return value{}, false
			}
			out.agg.vals = append(out.agg.vals, ev)
		}
		return out, true
	}
	return value{}, false
}
