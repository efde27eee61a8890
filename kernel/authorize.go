package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
)

// Authorization (pipeline step 12): with Options.Authz set, every
// tools/call is put to the Cedar policies after its arguments are validated
// and before the confirmation gate — principal x tool x canonical target x
// context — and tools/list shows a principal only the tools some policy
// could let it call. Without Options.Authz nothing here runs: behaviour is
// exactly that of a server without authorization.

// toolTarget is what a tool declares about its target: one resolver or
// the other (WithTarget, WithTargets).
type toolTarget struct {
	typ     authz.ResourceType
	resolve func(ctx context.Context, call *Call, args Args) (authz.Resource, error)
	several func(ctx context.Context, call *Call, args Args) ([]authz.Resource, error)
}

// resources resolves a call's targets: none is the server itself.
func (tt *toolTarget) resources(ctx context.Context, call *Call, args Args) ([]authz.Resource, error) {
	if tt.several != nil {
		return tt.several(ctx, call, args)
	}
	r, err := tt.resolve(ctx, call, args)
	if err != nil || r.Type == "" {
		return nil, err
	}
	return []authz.Resource{r}, nil
}

// Args is a read-only view of a call's validated arguments, for a target
// resolver. It reads string arguments and offers no way to change any:
// the kernel encodes the canonical arguments once, before the decision,
// and what the audit digests, the confirmation binds and the handler runs
// are all that one encoding's arguments (TestResolverCannotChangeArguments).
type Args struct{ m map[string]any }

// String returns the argument name when it is a string.
func (a Args) String(name string) (string, bool) {
	s, ok := a.m[name].(string)
	return s, ok
}

// Has reports whether the call carries the argument name, null included.
func (a Args) Has(name string) bool {
	_, ok := a.m[name]
	return ok
}

// Strings returns a copy of the argument name when it is an array whose
// every element is a string.
func (a Args) Strings(name string) ([]string, bool) {
	list, ok := a.m[name].([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(list))
	for i, v := range list {
		if out[i], ok = v.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// WithTarget declares the canonical target of a tool's calls, for
// authorization: resolve turns the validated arguments into the resource
// the call acts on, in the same canonical form its confirmation token binds
// to (a zone's name and id, never the caller's spelling). It may return the
// zero Resource, the server itself, for a call that names no target. A
// tool without a target acts on the server itself, Server::"<server name>".
//
// resolve runs before the decision, so it must change nothing (it is
// handed a read-only view of the arguments), and it must not tell a principal more than the decision would: a target that does
// not exist resolves to its normalized spelling, not to an error.
func WithTarget(t Tool, typ authz.ResourceType, resolve func(ctx context.Context, call *Call, args Args) (authz.Resource, error)) Tool {
	t.target = &toolTarget{typ: typ, resolve: resolve}
	return t
}

// WithTargets declares a tool whose calls may act on several targets of
// one type (a file moved from one path to another, a list of files read):
// resolve returns every target of a call, each in canonical form, and the
// call is allowed only when the policies allow every one of them; the
// first one denied refuses the call and names its deciding policies. No
// target (an empty list) is the server itself. An error refuses the call
// before any decision: a resolver fails closed on a target it cannot put
// in canonical form. WithTarget's rules for resolve apply.
func WithTargets(t Tool, typ authz.ResourceType, resolve func(ctx context.Context, call *Call, args Args) ([]authz.Resource, error)) Tool {
	t.target = &toolTarget{typ: typ, several: resolve}
	return t
}

// Listing declares that a tool lists items of typ, which its handler
// filters with Call.Permits: a policy decides both the call (on the server
// or its target) and each item (on the item's resource).
func Listing(t Tool, typ authz.ResourceType) Tool {
	t.listing = append(t.listing, typ)
	return t
}

// targetTypes are the resource types a tool's action applies to.
func (t *Tool) targetTypes() []string {
	var names []string
	if t.target != nil {
		names = append(names, t.target.typ.Name)
	}
	names = append(names, authz.ServerType) // a resolver may answer "the server" (no target named)
	for _, r := range t.listing {
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	return names
}

// authzModel is the model policies are validated against: every declared
// tool (also those read-only mode or the lists leave out, so that one
// policy file fits every deployment of the server), and the read of a
// resource when the embedder serves resources with a ReadTarget.
func authzModel(server string, tools []Tool, f Features) (*authz.Model, error) {
	m := &authz.Model{Server: server}
	seen := map[string]authz.ResourceType{}
	for i := range tools {
		t := &tools[i]
		var decl []authz.ResourceType
		if t.target != nil {
			decl = append(decl, t.target.typ)
		}
		for _, r := range append(decl, t.listing...) {
			if prev, ok := seen[r.Name]; ok {
				if fmt.Sprint(prev.Attrs) != fmt.Sprint(r.Attrs) {
					return nil, fmt.Errorf("kernel: resource type %s is declared with different attributes", r.Name)
				}
				continue
			}
			seen[r.Name] = r
			m.Resources = append(m.Resources, r)
		}
		m.Actions = append(m.Actions, authz.Action{Name: t.name, ReadOnly: t.policy.ReadOnly == Yes,
			Destructive: t.policy.Destructive == Yes, Targets: t.targetTypes(), Arguments: t.schema})
	}
	if f.Resources && f.ReadTarget.Name != "" {
		m.Resources = append(m.Resources, f.ReadTarget)
		m.Actions = append(m.Actions, authz.Action{Name: ReadAction, ReadOnly: true, Targets: []string{f.ReadTarget.Name, authz.ServerType}})
	}
	return m, nil
}

// setupAuthz loads the policies (a policy that does not fit the tools stops
// startup) and filters tools/list.
func (s *Server) setupAuthz(tools []Tool) error {
	if s.opts.Authz == nil {
		return nil
	}
	m, err := authzModel(s.name, tools, s.opts.Features)
	if err != nil {
		return err
	}
	cfg := *s.opts.Authz
	if cfg.Logger == nil {
		cfg.Logger = s.logger
	}
	if s.authz, err = authz.New(m, cfg); err != nil {
		return err
	}

	s.mcp.AddReceivingMiddleware(s.listMiddleware)
	return nil
}

// Authorizer returns the authorizer in force (nil without Options.Authz),
// for reloading and watching its files.
func (s *Server) Authorizer() *authz.Authorizer { return s.authz }

// AuthzSchema returns the Cedar schema the kernel generates from tools, for
// operators writing policies (bulwark authz schema).
func AuthzSchema(server string, tools []Tool) (string, error) {
	return AuthzSchemaFeatures(server, tools, Features{})
}

// AuthzSchemaFeatures is AuthzSchema for a server that also serves f
// (Action::"resources/read" with Features.ReadTarget).
func AuthzSchemaFeatures(server string, tools []Tool, f Features) (string, error) {
	m, err := authzModel(server, tools, f)
	if err != nil {
		return "", err
	}
	return m.Schema()
}

func authzPrincipal(p identity.Principal) authz.Principal {
	auth := p.Scheme
	if auth == "" {
		auth = identity.SchemeNone
	}
	return authz.Principal{ID: p.ID, Plan: p.Plan, Auth: auth, Groups: p.Groups, Scopes: p.Scopes}
}

// authorize is step 12. It returns nil when the policies allow the call,
// and the refusal otherwise. Resolving the target may read the upstream
// (a zone id to its name); nothing is changed before the decision.
func (s *Server) authorize(ctx context.Context, call *Call, t *Tool, args map[string]any, rec *audit.Record) *mcp.CallToolResult {
	if s.authz == nil {
		return nil
	}
	var res authz.Resource
	var several []authz.Resource
	if t.target != nil {
		var err error
		if t.target.several != nil {
			several, err = t.target.several(ctx, call, Args{args})
		} else {
			res, err = t.target.resolve(ctx, call, Args{args})
		}
		if err != nil {
			return s.fail(ctx, call, rec, err)
		}
	}
	transport := "stdio"
	if call.header != nil {
		transport = "http"
	}
	now := rec.Time // the call's time, as its audit record has it: no second reading of the clock
	if now.IsZero() {
		now = s.opts.Now()
	}
	call.authzBuf = authz.Request{Principal: authzPrincipal(call.Principal), Action: t.name, ActionIndex: t.authzAction, Resource: res,
		Transport: transport, Confirmed: t.policy.Confirm.applies(args), Time: now, Arguments: args}
	call.authzReq = &call.authzBuf // for Permits
	if len(several) > 0 {
		return s.authorizeEach(ctx, call, t, several, rec)
	}
	d := s.authz.DecideRequest(&call.authzBuf)
	rec.Authz, rec.AuthzPolicies = "deny", d.Policies
	if d.Allow {
		rec.Authz = "allow"
		return nil
	}
	return s.refuse(ctx, call, t, rec, d)
}

// authorizeEach decides a call that acts on several targets: each is put
// to the policies, and the first denied refuses the call. An allowed
// call's audit record names every policy that allowed one of its targets,
// and how many targets were decided (the attribute authz_targets).
func (s *Server) authorizeEach(ctx context.Context, call *Call, t *Tool, targets []authz.Resource, rec *audit.Record) *mcp.CallToolResult {
	var policies []string
	for _, r := range targets {
		call.authzBuf.Resource = r
		d := s.authz.DecideRequest(&call.authzBuf)
		if !d.Allow {
			rec.Authz, rec.AuthzPolicies = "deny", d.Policies
			return s.refuse(ctx, call, t, rec, d)
		}
		for _, p := range d.Policies {
			if !slices.Contains(policies, p) {
				policies = append(policies, p)
			}
		}
	}
	rec.Authz, rec.AuthzPolicies = "allow", policies
	call.SetAuditAttr("authz_targets", strconv.Itoa(len(targets)))
	return nil
}

// refuse is authorize's refusal, apart from the allowed path (whose code a
// call runs through once, cold).
func (s *Server) refuse(ctx context.Context, call *Call, t *Tool, rec *audit.Record, d authz.Decision) *mcp.CallToolResult {
	s.logger.InfoContext(ctx, "call denied by the authorization policy", "tool", t.name, "principal", call.Principal.ID, "reason", d.Reason)
	return s.fail(ctx, call, rec, denied(d))
}

// denied is the refusal: it names the deciding policies, never their text.
func denied(d authz.Decision) *Error {
	why := "no policy permits it"
	if len(d.Errors) > 0 {
		why = "the evaluation of policy " + strings.Join(d.Errors, ", ") + " failed, which denies"
	} else if len(d.Policies) > 0 {
		why = "it is forbidden by policy " + strings.Join(d.Policies, ", ")
	}
	return Errorf(PermissionDenied, "The authorization policy does not allow this call: %s.", why).
		WithHint("Ask the operator for access; they can test the policy with `bulwark authz check`.")
}

// Permits reports whether the authorization policy lets this call's
// principal call this tool on res, with the call's own arguments: a
// listing tool drops the items the principal may not see. Without a policy
// it is always true.
func (c *Call) Permits(res authz.Resource) bool {
	if !c.Authorizing() {
		return true
	}
	if c.authzReq == nil {
		return false
	}
	r := *c.authzReq
	r.Resource = res
	return c.server.authz.Decide(r).Allow
}

// Authorizing reports whether an authorization policy is in force: a
// listing tool that cannot filter cheaply may then ask for a narrower call.
func (c *Call) Authorizing() bool { return c != nil && c.server != nil && c.server.authz != nil }

// listMiddleware drops from tools/list the tools no policy could let the
// caller call (authz.Policies.CouldAllow). The list it answers varies by
// principal, so it is marked for no cache but the caller's
// (cacheScope "private"), and a caller no policy lets call anything gets
// an empty list, never null.
func (s *Server) listMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		lr, ok := res.(*mcp.ListToolsResult)
		if method != "tools/list" || err != nil || !ok {
			return res, err
		}
		p := authzPrincipal(listPrincipal(ctx, req))
		pol := s.authz.Policies()
		out := *lr
		out.Tools = make([]*mcp.Tool, 0, len(lr.Tools))
		out.CacheScope = "private"
		for _, t := range lr.Tools {
			if pol.CouldAllow(p, t.Name) {
				out.Tools = append(out.Tools, t)
			}
		}
		return &out, nil
	}
}

// withdrawnRefusal is the answer to a call of a withdrawn tool
// (dynamic.go): the embedder's reason, unless an authorization policy is
// in force and no policy could let the caller call the tool — then the
// denial, as for a tool that is there, so that the reason (a changed
// definition, say) reaches only the callers who could call it.
func (s *Server) withdrawnRefusal(ctx context.Context, req mcp.Request, tool string, why *Error) *Error {
	if s.authz == nil || s.authz.Policies().CouldAllow(authzPrincipal(listPrincipal(ctx, req)), tool) {
		return why
	}
	return denied(authz.Decision{})
}

func listPrincipal(ctx context.Context, req mcp.Request) identity.Principal {
	ctr := &mcp.CallToolRequest{}
	if req != nil {
		ctr.Extra = req.GetExtra()
	}
	return principalFrom(ctx, ctr)
}

// AuthorizeRead decides a resources/read of res (Features.ReadTarget) by
// the principal over transport ("stdio" or "http"): allowed when no
// authorization policy is configured, else as the policies in force say.
func (s *Server) AuthorizeRead(p identity.Principal, transport string, res authz.Resource) authz.Decision {
	if s.authz == nil {
		return authz.Decision{Allow: true}
	}
	return s.authz.Decide(authz.Request{Principal: authzPrincipal(p), Action: ReadAction, Resource: res,
		Transport: transport, Time: s.opts.Now()})
}

// RequestPrincipal is who sent req, as a tool call's principal is found:
// the HTTP layer's, the token's, or the local user; and its transport.
func RequestPrincipal(ctx context.Context, req mcp.Request) (identity.Principal, string) {
	transport := "stdio"
	if req != nil && req.GetExtra() != nil && req.GetExtra().Header != nil {
		transport = "http"
	}
	return listPrincipal(ctx, req), transport
}

// CheckAuthz answers what step 12 would decide for a call, without making
// it: the arguments are validated, the target resolved (a read, never a
// write) and the policies in force asked, as for a call over transport
// ("stdio" or "http"). Nothing else of the pipeline runs. For a call on
// several targets the decision is the first denial, or the last target's
// allowance, with its target (CheckAuthzTargets gives each). For `bulwark
// authz check`, and tests.
func (s *Server) CheckAuthz(ctx context.Context, p identity.Principal, transport, tool string, raw json.RawMessage) (authz.Decision, authz.Resource, error) {
	all, err := s.CheckAuthzTargets(ctx, p, transport, tool, raw)
	if err != nil {
		return authz.Decision{}, authz.Resource{}, err
	}
	for _, td := range all {
		if !td.Decision.Allow {
			return td.Decision, td.Resource, nil
		}
	}
	last := all[len(all)-1]
	return last.Decision, last.Resource, nil
}

// TargetDecision is the decision on one target of a call.
type TargetDecision struct {
	Resource authz.Resource
	Decision authz.Decision
}

// CheckAuthzTargets is CheckAuthz for every target of the call, in the
// order the tool's resolver gives them (one, the server, for a call that
// names none); the call would be allowed only when every one is.
func (s *Server) CheckAuthzTargets(ctx context.Context, p identity.Principal, transport, tool string, raw json.RawMessage) ([]TargetDecision, error) {
	if s.authz == nil {
		return nil, errors.New("kernel: no authorization policy is configured")
	}
	t, ok := s.lookup(tool)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", tool)
	}
	args, _, err := s.arguments(raw, t.args)
	if err != nil {
		return nil, err
	}
	call := &Call{Principal: p, Tool: tool, server: s}
	var targets []authz.Resource
	if t.target != nil {
		if targets, err = t.target.resources(ctx, call, Args{args}); err != nil {
			return nil, err
		}
	}
	if len(targets) == 0 {
		targets = []authz.Resource{{}}
	}
	out := make([]TargetDecision, len(targets))
	for i, res := range targets {
		d := s.authz.Decide(authz.Request{Principal: authzPrincipal(p), Action: tool, Resource: res, Transport: transport,
			Confirmed: t.policy.Confirm.applies(args), Time: s.opts.Now(), Arguments: args})
		out[i] = TargetDecision{Resource: res, Decision: d}
	}
	return out, nil
}
