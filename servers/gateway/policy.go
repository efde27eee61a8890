package gateway

import (
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Pinner decides whether a tool's definition, as the upstream sent it on
// the wire, may be used (servers/gateway/pin implements it: a canonical hash
// of the whole tool object, trust on first use or approval). The hash it
// returns is bound into every confirmation token of the tool and written to
// the audit.
type Pinner interface {
	Check(upstream string, tool json.RawMessage) (hash string, allowed bool, reason string, err error)
}

// AllowAll is the Pinner used when none is configured: every definition is
// allowed, under the hash "" (no pinning).
type AllowAll struct{}

// Check allows every tool.
func (AllowAll) Check(string, json.RawMessage) (string, bool, string, error) {
	return "", true, "", nil
}

// exposed reports whether the upstream's policy exposes tool name.
func (u *Upstream) exposed(name string) bool {
	if len(u.AllowTools) > 0 && !slices.Contains(u.AllowTools, name) {
		return false
	}
	return !slices.Contains(u.DenyTools, name)
}

// policy is the kernel policy of one upstream tool. The upstream's own
// annotations count only when the upstream is trusted; otherwise the
// configuration's lists decide, and a tool on none of them is destructive.
// Destructive tools and the tools on confirm_tools are gated; a gated
// tool's token is bound through the gateway's preview (upstream, tool, pin
// hash, target and every argument), never to a subset of fields.
func (u *Upstream) policy(t *mcp.Tool) kernel.Policy {
	readOnly, destructive, idempotent, openWorld := u.hints(t)
	p := kernel.Policy{ReadOnly: yesNo(readOnly), Destructive: yesNo(destructive && !readOnly),
		Idempotent: yesNo(idempotent), OpenWorld: yesNo(openWorld), Confirm: kernel.Never, Tier: kernel.Open}
	if !readOnly && (destructive || slices.Contains(u.ConfirmTools, t.Name)) {
		p.Confirm = kernel.Always(kernel.Bind{Target: []string{u.bindName(t.Name)}}).
			Described("always; bound to the tool's definition and every argument")
	}
	return p
}

// bindName is the field the kernel's binding names; the gateway's preview
// replaces it by its own canonical target.
func (u *Upstream) bindName(tool string) string {
	if a := u.TargetArgs[tool]; len(a) > 0 {
		return a[0]
	}
	if u.TargetArg != "" {
		return u.TargetArg
	}
	return "arguments"
}

func (u *Upstream) hints(t *mcp.Tool) (readOnly, destructive, idempotent, openWorld bool) {
	if u.TrustAnnotations && t.Annotations != nil {
		a := t.Annotations
		destructive = a.DestructiveHint == nil || *a.DestructiveHint // the spec's default is true
		openWorld = a.OpenWorldHint == nil || *a.OpenWorldHint
		return a.ReadOnlyHint, destructive, a.IdempotentHint, openWorld
	}
	if u.TrustAnnotations { // trusted, but no annotations: the spec's defaults
		return false, true, false, true
	}
	switch {
	case slices.Contains(u.ReadOnlyTools, t.Name):
		return true, false, true, true
	case slices.Contains(u.WriteTools, t.Name):
		return false, false, false, true
	}
	return false, true, false, true
}

func yesNo(b bool) kernel.YesNo {
	if b {
		return kernel.Yes
	}
	return kernel.No
}
