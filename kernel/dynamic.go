package kernel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Dynamic tools: an embedder whose tools are known only at run time (the
// gateway, whose upstreams may change their tool lists mid-session) adds
// and withdraws tools after New. Each change goes through the same checks
// as New (declaration, tier, read-only mode, allow and deny lists) and the
// go-sdk tells every session (notifications/tools/list_changed).
//
// An observer (Options.Observer) counts a tool added after New under the
// label "other": its label set is fixed when it is attached.
//
// A withdrawn tool is not listed, and a call of it is answered with the
// embedder's reason as a tool error (instead of "unknown tool"), before
// admission: the call costs no rate-limit slot and reaches no handler.
// Under an authorization policy, a caller no policy could let call the
// tool is answered permission_denied instead (withdrawnRefusal).

// dynamic is the run-time state of the tool set. mu guards Server.tools
// and Server.byName once the server serves (readers call lookup).
type dynamic struct {
	mu        sync.RWMutex
	withdrawn map[string]*Error
	atNew     map[string]bool // the tools declared to New; fixed after New
}

// lookup returns the registered tool called name.
func (s *Server) lookup(name string) (*Tool, bool) {
	s.dyn.mu.RLock()
	defer s.dyn.mu.RUnlock()
	t, ok := s.byName[name]
	return t, ok
}

// ErrStaticTools is the error of AddTools and WithdrawTool on a server
// built without Options.DynamicTools.
var ErrStaticTools = errors.New("kernel: the tool set is fixed (Options.DynamicTools is not set)")

// capabilities are the server's capabilities: tools.listChanged only when
// its tool set may change.
func (s *Server) capabilities() *mcp.ServerCapabilities {
	c := serverCapabilities(s.opts.Features)
	c.Tools.ListChanged = s.opts.DynamicTools
	if c.Prompts != nil { // an embedder that changes its tools changes its prompts (a gateway)
		c.Prompts.ListChanged = s.opts.DynamicTools
	}
	if c.Resources != nil { // and its resources
		c.Resources.ListChanged = s.opts.DynamicTools
	}
	return c
}

// AddTools registers tools after New, or replaces a registered tool of the
// same name, and ends the withdrawal of each. A tool that read-only mode or
// the allow and deny lists leave out is skipped (reported in skipped).
// Under an authorization policy only tools declared to New can be added:
// the policies' schema was generated from those. It is all or nothing:
// every tool is checked (Tool.Validate's check among others) and prepared
// before any is registered, so an error means none was.
func (s *Server) AddTools(tools ...Tool) (skipped []string, err error) {
	if !s.opts.DynamicTools {
		return nil, ErrStaticTools
	}
	var add []Tool
	for _, t := range tools {
		if err := t.validate(); err != nil {
			return nil, err
		}
		if err := s.opts.Tiers.CheckTier(t.policy.tier()); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.name, err)
		}
		if s.authz != nil && !s.dyn.declared(t.name) {
			return nil, fmt.Errorf("tool %s: cannot be added at run time under an authorization policy", t.name)
		}
		sel, err := selectTools([]Tool{t}, s.opts.ReadOnly, nil, nil)
		if err != nil {
			return nil, err
		}
		if len(sel) == 0 || !s.allowed(t.name) {
			skipped = append(skipped, t.name)
			continue
		}
		add = append(add, t)
	}
	type prepared struct {
		t  Tool
		mt *mcp.Tool
		h  mcp.ToolHandler
	}
	ready := make([]prepared, 0, len(add))
	for _, t := range add {
		t, mt, h, err := s.prepare(t)
		if err != nil {
			return nil, err
		}
		ready = append(ready, prepared{t, mt, h})
	}
	for _, p := range ready {
		s.dyn.mu.Lock()
		s.replace(p.t.name, &p.t)
		delete(s.dyn.withdrawn, p.t.name)
		s.dyn.mu.Unlock()
		s.mcp.AddTool(p.mt, p.h)
		s.fast.set(p.mt, p.h) // the stdio fast path calls it too (fastpath_stdio.go)
	}
	return skipped, nil
}

// allowed applies the allow and deny lists to a name.
func (s *Server) allowed(name string) bool {
	if len(s.opts.Allow) > 0 && !slices.ContainsFunc(s.opts.Allow, func(p string) bool { return matchName(p, name) }) {
		return false
	}
	return !slices.ContainsFunc(s.opts.Deny, func(p string) bool { return denies(p, name) })
}

// declared reports whether New saw a tool called name (authorization).
func (d *dynamic) declared(name string) bool { return d.atNew[name] }

// replace puts t in the place of the tool called name (none: removes it),
// copy on write: readers that hold the old slice or map keep a consistent
// view. s.dyn.mu is held.
func (s *Server) replace(name string, t *Tool) {
	tools := slices.DeleteFunc(slices.Clone(s.tools), func(o Tool) bool { return o.name == name })
	if t != nil {
		tools = append(tools, *t)
	}
	byName := make(map[string]*Tool, len(tools))
	for i := range tools {
		byName[tools[i].name] = &tools[i]
	}
	s.tools, s.byName = tools, byName
}

// WithdrawTool removes the tool called name from the list (when it is
// registered) and answers every later call of it with why, as a tool
// error, until AddTools registers it again. A name never registered may be
// withdrawn too: its calls get why instead of "unknown tool".
func (s *Server) WithdrawTool(name string, why *Error) error {
	if why == nil {
		return errors.New("kernel: withdrawing a tool needs a reason")
	}
	s.dyn.mu.Lock()
	_, registered := s.byName[name]
	if registered && !s.opts.DynamicTools {
		s.dyn.mu.Unlock()
		return ErrStaticTools
	}
	if registered {
		s.replace(name, nil)
	}
	if s.dyn.withdrawn == nil {
		s.dyn.withdrawn = map[string]*Error{}
	}
	s.dyn.withdrawn[name] = why
	s.dyn.mu.Unlock()
	if registered {
		s.mcp.RemoveTools(name)
	}
	return nil
}

// withdrawnMiddleware answers a call of a withdrawn tool with its reason.
func (s *Server) withdrawnMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ctr, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
			s.dyn.mu.RLock()
			why := s.dyn.withdrawn[ctr.Params.Name]
			s.dyn.mu.RUnlock()
			if why != nil {
				return s.errorResult(s.withdrawnRefusal(ctx, req, ctr.Params.Name, why), ""), nil
			}
		}
		return next(ctx, method, req)
	}
}
