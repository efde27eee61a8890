package kernel

import (
	"errors"
	"fmt"
	"strings"
)

// YesNo is a tri-state answer of a Policy, behind each of the tool's MCP
// hints (readOnlyHint, destructiveHint, …): a tool must say Yes or No; the
// zero value means "not stated" and fails validation. (Error.Hint is
// something else: advice to the caller.)
type YesNo uint8

// YesNo values.
const (
	unset YesNo = iota
	Yes
	No
)

func (h YesNo) bool() bool { return h == Yes }

// String is "yes", "no" or "unset".
func (h YesNo) String() string {
	switch h {
	case Yes:
		return "yes"
	case No:
		return "no"
	}
	return "unset"
}

// Open is the tier of a tool that every plan may call.
const Open = "open"

// Policy is a tool's explicit safety statement. Every field must be set: a
// tool that leaves one unset is refused at registration, and a test of every
// server checks it.
type Policy struct {
	// ReadOnly: the tool changes nothing. Read-only mode registers only
	// tools with ReadOnly: Yes.
	ReadOnly YesNo
	// Destructive: the tool may remove or overwrite data.
	Destructive YesNo
	// Idempotent: calling it twice with the same arguments has no further
	// effect.
	Idempotent YesNo
	// OpenWorld: the tool talks to a system outside this server.
	OpenWorld YesNo
	// Confirm is the confirmation gate: Never, Always(...) or When(...).
	Confirm Gate
	// Tier is the lowest plan that may call the tool, or Open.
	Tier string
}

// Bind names the argument fields a confirmation token is bound to, by their
// JSON names. Target fields say what the call acts on; Payload fields are
// what it writes. Both are hashed in canonical form.
type Bind struct {
	Target  []string
	Payload []string
}

type gateMode uint8

const (
	gateUnset gateMode = iota
	gateNever
	gateAlways
	gateWhen
)

// Gate says when a tool needs a confirmation token.
type Gate struct {
	mode      gateMode
	when      func(args map[string]any) bool
	bind      Bind
	condition string
}

// Never is the gate of a tool that never asks for confirmation.
var Never = Gate{mode: gateNever}

// Always gates every call, binding the token to bind.
func Always(bind Bind) Gate { return Gate{mode: gateAlways, bind: bind} }

// When gates the calls for which pred holds on the decoded arguments (for
// example only when protection is being removed), binding the token to bind.
func When(pred func(args map[string]any) bool, bind Bind) Gate {
	return Gate{mode: gateWhen, when: pred, bind: bind}
}

// Described returns the gate with a sentence saying, for the
// documentation, when it asks, e.g. "only when removing protection
// (`delete: false`)", or "when the pad holds text" for a gate whose preview
// can find nothing to lose.
func (g Gate) Described(condition string) Gate {
	g.condition = condition
	return g
}

// Gated reports whether the gate can ever ask for confirmation.
func (g Gate) Gated() bool { return g.mode == gateAlways || g.mode == gateWhen }

// applies reports whether a call with args needs a token.
func (g Gate) applies(args map[string]any) bool {
	switch g.mode {
	case gateAlways:
		return true
	case gateWhen:
		return g.when(args)
	}
	return false
}

// String describes the gate, for the README's tool tables and for policy
// tests alike: "never", "always", a conditional gate's condition (see
// Described; "conditional" when it has none), followed by
// "; bound to `records`" when the token is bound to payload fields.
func (g Gate) String() string {
	var kind string
	switch g.mode {
	case gateNever:
		return "never"
	case gateAlways:
		kind = "always"
	case gateWhen:
		kind = "conditional"
	default:
		return "unset"
	}
	if g.condition != "" {
		kind = g.condition
	}
	if len(g.bind.Payload) == 0 {
		return kind
	}
	fields := make([]string, len(g.bind.Payload))
	for i, f := range g.bind.Payload {
		fields[i] = "`" + f + "`"
	}
	return kind + "; bound to " + strings.Join(fields, ", ")
}

// errPolicy reports a tool whose policy is incomplete or contradictory.
var errPolicy = errors.New("kernel: invalid tool policy")

// Validate checks that every field is set and that the fields agree.
func (p Policy) Validate() error {
	// In field order, so the first unset field is the one reported.
	for _, f := range []struct {
		name string
		v    YesNo
	}{{"ReadOnly", p.ReadOnly}, {"Destructive", p.Destructive}, {"Idempotent", p.Idempotent}, {"OpenWorld", p.OpenWorld}} {
		if f.v != Yes && f.v != No {
			return fmt.Errorf("%w: %s is not set", errPolicy, f.name)
		}
	}
	switch {
	case p.Confirm.mode == gateUnset:
		return fmt.Errorf("%w: Confirm is not set (use kernel.Never, Always or When)", errPolicy)
	case p.Confirm.mode == gateWhen && p.Confirm.when == nil:
		return fmt.Errorf("%w: When needs a predicate", errPolicy)
	case p.Tier == "":
		return fmt.Errorf("%w: Tier is not set (use kernel.Open for every plan)", errPolicy)
	case p.ReadOnly == Yes && p.Destructive == Yes:
		return fmt.Errorf("%w: a read-only tool cannot be destructive", errPolicy)
	case p.ReadOnly == Yes && p.Confirm.Gated():
		return fmt.Errorf("%w: a read-only tool needs no confirmation", errPolicy)
	case p.Confirm.Gated() && len(p.Confirm.bind.Target) == 0:
		return fmt.Errorf("%w: a gated tool must bind its token to target fields", errPolicy)
	}
	return nil
}

// tier is the tier as kernel/ratelimit knows it: "" for Open.
func (p Policy) tier() string {
	if p.Tier == Open {
		return ""
	}
	return p.Tier
}
