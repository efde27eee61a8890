package authz

import (
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/eval"
)

// CouldAllow reports whether some policy could let the principal call the
// tool, on some target with some arguments: a permit policy survives
// cedar-go's partial evaluation with the resource and the context unknown,
// and no forbid policy forbids the pair whatever the resource and context.
// It decides what tools/list shows; the call itself is still decided by
// Decide, so an answer that is too generous shows a tool, never runs it.
func (p *Policies) CouldAllow(pr Principal, tool string) bool {
	pl, ok := p.plans[tool]
	if !ok {
		return false
	}
	pe := p.principal(pr)
	env := p.principalEnv(pe, pl)
	permit := false
	for _, r := range p.rules(pe, pl).rules {
		residual, keep := eval.PartialPolicy(env, r.ast)
		if !keep {
			continue
		}
		if residual.Effect == xast.EffectForbid {
			if unconditional(residual) {
				return false
			}
			continue
		}
		permit = true
	}
	return permit
}

// unconditional: the residual policy applies to every resource and context.
func unconditional(p *xast.Policy) bool {
	if _, all := p.Resource.(xast.ScopeTypeAll); !all {
		return false
	}
	for _, c := range p.Conditions {
		v, ok := c.Body.(xast.NodeValue)
		if !ok || v.Value != types.Boolean(c.Condition == xast.ConditionWhen) {
			return false
		}
	}
	return true
}
