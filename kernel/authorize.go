package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// toolTarget is what a tool declares about its target.
type toolTarget struct {
	typ     authz.ResourceType
	resolve func(ctx context.Context, call *Call, args Args) (authz.Resource, error)
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
// policy file fits every deployment of the server).
func authzModel(server string, tools []Tool) (*authz.Model, error) {
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
	return m, nil
}

// setupAuthz loads the policies (a policy that does not fit the tools stops
// startup) and filters tools/list.
func (s *Server) setupAuthz(tools []Tool) error {
	if s.opts.Authz == nil {
		return nil
	}
	m, err := authzModel(s.name, tools)
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
	m, err := authzModel(server, tools)
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
	if t.target != nil {
		var err error
		if res, err = t.target.resolve(ctx, call, Args{args}); err != nil {
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
	d := s.authz.DecideRequest(&call.authzBuf)
	rec.Authz, rec.AuthzPolicies = "deny", d.Policies
	if d.Allow {
		rec.Authz = "allow"
		return nil
	}
	return s.refuse(ctx, call, t, rec, d)
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
// caller call.
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
		out.Tools = nil
		for _, t := range lr.Tools {
			if pol.CouldAllow(p, t.Name) {
				out.Tools = append(out.Tools, t)
			}
		}
		return &out, nil
	}
}

func listPrincipal(ctx context.Context, req mcp.Request) identity.Principal {
	ctr := &mcp.CallToolRequest{}
	if req != nil {
		ctr.Extra = req.GetExtra()
	}
	return principalFrom(ctx, ctr)
}

// CheckAuthz answers what step 12 would decide for a call, without making
// it: the arguments are validated, the target resolved (a read, never a
// write) and the policies in force asked, as for a call over transport
// ("stdio" or "http"). Nothing else of the pipeline runs. For `bulwark
// authz check`, and tests.
func (s *Server) CheckAuthz(ctx context.Context, p identity.Principal, transport, tool string, raw json.RawMessage) (authz.Decision, authz.Resource, error) {
	if s.authz == nil {
		return authz.Decision{}, authz.Resource{}, errors.New("kernel: no authorization policy is configured")
	}
	t, ok := s.lookup(tool)
	if !ok {
		return authz.Decision{}, authz.Resource{}, fmt.Errorf("unknown tool %q", tool)
	}
	args, _, err := s.arguments(raw, t.args)
	if err != nil {
		return authz.Decision{}, authz.Resource{}, err
	}
	call := &Call{Principal: p, Tool: tool, server: s}
	var res authz.Resource
	if t.target != nil {
		if res, err = t.target.resolve(ctx, call, Args{args}); err != nil {
			return authz.Decision{}, res, err
		}
	}
	d := s.authz.Decide(authz.Request{Principal: authzPrincipal(p), Action: tool, Resource: res, Transport: transport,
		Confirmed: t.policy.Confirm.applies(args), Time: s.opts.Now(), Arguments: args})
	return d, res, nil
}
