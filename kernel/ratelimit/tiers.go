// Package ratelimit decides whether a principal may make another call: plan
// tiers first (a free plan never reaches a pro tool), then a fixed-window
// limit per principal ID.
//
// The order matters and is the caller's to keep: check Tiers.Allows before
// Limiter.Allow, so that a call refused for its tier does not spend a slot.
// Limits are keyed by the authenticated principal ID, never by the client
// address; a principal with many addresses shares one window.
//
// The Limiter fails closed: when its Store fails, Allow refuses the call and
// returns an error wrapping ErrStoreUnavailable; a caller that chose to keep
// some calls going during an outage counts them with AllowLocal.
//
// Every refusal is shaped here, for every transport: Refusal for both rate
// limits (the HTTP flood guard per address, this Limiter per principal) and
// Unavailable for a store outage; RetryAfterSeconds is the one rounding of a
// retry delay.
package ratelimit

import (
	"errors"
	"fmt"
	"slices"
)

// DefaultPlans is the plan order used by the HuGR kernel, lowest first.
var DefaultPlans = []string{"free", "pro", "enterprise"}

// errTiers reports an invalid plan list given to NewTiers.
var errTiers = errors.New("ratelimit: invalid tiers")

// Tiers is an ordered list of plan names, lowest first. A plan may call a
// tool whose tier is the same plan or a lower one. The zero value and a nil
// *Tiers know no plans: they allow only untiered tools.
type Tiers struct {
	plans []string
	rank  map[string]int
}

// NewTiers returns Tiers for plans, lowest first. Names must be non-empty,
// at most 64 bytes of [A-Za-z0-9._-], and distinct.
func NewTiers(plans ...string) (*Tiers, error) {
	if len(plans) == 0 {
		return nil, fmt.Errorf("%w: no plans", errTiers)
	}
	t := &Tiers{plans: slices.Clone(plans), rank: make(map[string]int, len(plans))}
	for i, p := range plans {
		if !validName(p) {
			return nil, fmt.Errorf("%w: plan %d: name must be 1-64 characters of [A-Za-z0-9._-]", errTiers, i+1)
		}
		if _, dup := t.rank[p]; dup {
			return nil, fmt.Errorf("%w: plan %q listed twice", errTiers, p)
		}
		t.rank[p] = i
	}
	return t, nil
}

// Plans returns the plan names, lowest first.
func (t *Tiers) Plans() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.plans)
}

// Allows reports whether a principal on plan may call a tool of toolTier.
// An empty toolTier means the tool is untiered and open to every plan. An
// unknown plan or an unknown tier is refused (fail closed); use CheckTier at
// startup so that an unknown tier is a configuration error, not a refusal.
func (t *Tiers) Allows(plan, toolTier string) bool {
	if toolTier == "" {
		return true
	}
	if t == nil {
		return false
	}
	need, ok := t.rank[toolTier]
	if !ok {
		return false
	}
	have, ok := t.rank[plan]
	return ok && have >= need
}

// CheckTier returns an error unless toolTier is empty or a known plan. Call
// it when tools are registered, so that a typo fails at startup.
func (t *Tiers) CheckTier(toolTier string) error {
	if toolTier == "" {
		return nil
	}
	if t != nil {
		if _, ok := t.rank[toolTier]; ok {
			return nil
		}
	}
	return fmt.Errorf("%w: unknown tool tier %q (plans: %v)", errTiers, toolTier, t.Plans())
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
