package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/servers/gateway/pin"
)

// Prompts are relayed like tools (docs/gateway.md, "Prompts"): an
// upstream that declares prompts is listed at every start and at every
// notifications/prompts/list_changed; each prompt is served as
// <prefix>.<name> on the kernel's MCP server, pinned under the Pinner key
// "<upstream>/prompts" (a definition that changed is hidden until `bulwark
// gateway approve <upstream>/prompts.<name>`), its title, description and
// arguments' descriptions cleaned, cut and marked as the server's. A get
// is checked against the prompt's declared arguments before anything is
// sent, and its result shaped by the kernel (kernel.Server.ShapePrompt:
// text enveloped, images capped, resource links kept with their URIs
// namespaced, unknown roles and blocks left out) and audited.

// Bounds of the relayed prompts.
const (
	maxPrompts         = 1000
	maxPromptArgs      = 32
	maxPromptArgValue  = 4096     // bytes of one argument's value
	maxPromptArgsBytes = 16 << 10 // bytes of all of them
)

// promptDef is a prompt as the upstream last listed it, and the Pinner's
// verdict. raw is the go-sdk's encoding of it: what is relayed is what
// the go-sdk decoded, so that is what is pinned.
type promptDef struct {
	prompt  *mcp.Prompt
	raw     json.RawMessage
	hash    string
	allowed bool
	reason  string
}

// promptPinKey is the Pinner's upstream key of u's prompts: a name no
// upstream can have ([a-z0-9_-]), so its pins never mix with tools'.
func promptPinKey(u *Upstream) string { return u.Name + "/prompts" }

// offersPrompts reports whether the session's server declares prompts.
func offersPrompts(sess *mcp.ClientSession) bool {
	r := sess.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Prompts != nil
}

// listPrompts lists every prompt of sess, within maxPrompts and
// maxListPages; a name listed twice is hidden.
func listPrompts(ctx context.Context, sess *mcp.ClientSession) (map[string]promptDef, []string, error) {
	defs := map[string]promptDef{}
	var order []string
	dups := map[string]bool{}
	seen := map[string]bool{}
	params := &mcp.ListPromptsParams{}
	for page := 1; ; page++ {
		res, err := sess.ListPrompts(ctx, params)
		if err != nil {
			return nil, nil, fmt.Errorf("listing prompts: %w", err)
		}
		for _, p := range res.Prompts {
			if p == nil {
				continue
			}
			if len(defs) == maxPrompts {
				return nil, nil, fmt.Errorf("listing prompts: more than %d", maxPrompts)
			}
			if _, dup := defs[p.Name]; dup {
				dups[p.Name] = true
				continue
			}
			raw, err := json.Marshal(p)
			if err != nil {
				return nil, nil, fmt.Errorf("encoding prompt %q: %w", p.Name, err)
			}
			defs[p.Name] = promptDef{prompt: p, raw: raw}
			order = append(order, p.Name)
		}
		switch {
		case res.NextCursor == "":
			for n := range dups {
				defs[n] = promptDef{prompt: defs[n].prompt, reason: "the upstream listed more than one prompt under this name"}
			}
			return defs, order, nil
		case seen[res.NextCursor]:
			return nil, nil, fmt.Errorf("listing prompts: the upstream's paging loops (page %d)", page)
		case page == maxListPages:
			return nil, nil, fmt.Errorf("listing prompts: the upstream's paging did not end within %d pages", maxListPages)
		}
		seen[res.NextCursor] = true
		params = &mcp.ListPromptsParams{Cursor: res.NextCursor}
	}
}

// checkPromptPins asks the Pinner about every prompt of one listing.
func (g *Gateway) checkPromptPins(ctx context.Context, l *link, defs map[string]promptDef, order []string) {
	order = slices.DeleteFunc(slices.Clone(order), func(n string) bool { return defs[n].reason != "" })
	raws := make([]json.RawMessage, len(order))
	for i, n := range order {
		raws[i] = defs[n].raw
	}
	results := g.pinResults(ctx, promptPinKey(l.u), raws)
	for i, n := range order {
		d, r := defs[n], results[i]
		d.hash = r.Hash
		d.allowed, d.reason, _ = g.pinVerdict(r)
		defs[n] = d
	}
	for n, d := range defs {
		if !d.allowed && !slices.Contains(l.u.DenyPrompts, n) {
			g.logger.Warn("upstream prompt hidden", "upstream", l.u.Name, "prompt", strconv.QuoteToASCII(n), "reason", untrusted.CleanString(d.reason))
		}
	}
}

// pinResults asks the Pinner about the definitions of one listing under
// key (a ListPinner at once).
func (g *Gateway) pinResults(ctx context.Context, key string, raws []json.RawMessage) []pin.Result {
	if lp, ok := g.pinner.(ListPinner); ok {
		return lp.CheckList(ctx, key, raws)
	}
	results := make([]pin.Result, len(raws))
	for i, raw := range raws {
		r := &results[i]
		r.Hash, r.Allowed, r.Reason, r.Err = g.pinner.Check(key, raw)
	}
	return results
}

// refreshPrompts lists the prompts of sess (when its server declares
// them), checks them and publishes the changes. The link's listMu is held.
func (g *Gateway) refreshPrompts(ctx context.Context, l *link, sess *mcp.ClientSession) {
	var defs map[string]promptDef
	if offersPrompts(sess) {
		var order []string
		var err error
		if defs, order, err = listPrompts(ctx, sess); err != nil {
			g.logger.Warn("upstream prompts not relayed", "upstream", l.u.Name, "error", g.scrub.text(err.Error()))
			defs = nil
		} else {
			g.checkPromptPins(ctx, l, defs, order)
		}
	}
	l.mu.Lock()
	l.prompts = defs
	l.mu.Unlock()
	g.publishPrompts(l)
}

// refreshLater runs refresh in the background, one listing of the link at a
// time, if sess is still the link's session by then.
func (l *link) refreshLater(sess *mcp.ClientSession, refresh func(context.Context, *link, *mcp.ClientSession)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		l.listMu.Lock()
		defer l.listMu.Unlock()
		l.mu.Lock()
		current := l.sess == sess
		l.mu.Unlock()
		if current {
			refresh(ctx, l, sess)
		}
	}()
}

// onPromptsChanged re-reads the prompts (notifications/prompts/list_changed).
func (l *link) onPromptsChanged(_ context.Context, req *mcp.PromptListChangedRequest) {
	l.refreshLater(req.Session, l.g.refreshPrompts)
}

// publishPrompts brings the kernel's prompts of l to its current
// listing: it removes the hidden, the denied and the gone, and adds the
// new and the changed. The link's listMu is held.
func (g *Gateway) publishPrompts(l *link) {
	g.ksMu.Lock()
	ks := g.ks
	g.ksMu.Unlock()
	if ks == nil {
		return
	}
	l.mu.Lock()
	defs, old := l.prompts, l.servedPrompts
	l.mu.Unlock()
	served := map[string]promptDef{}
	var remove []string
	for n, d := range defs {
		if !d.allowed || slices.Contains(l.u.DenyPrompts, n) {
			continue
		}
		if o, ok := old[n]; ok && string(o.raw) == string(d.raw) {
			served[n] = d
			continue
		}
		p, err := servedPrompt(l.u, d.prompt)
		if err != nil {
			g.logger.Warn("upstream prompt not relayed", "upstream", l.u.Name, "prompt", strconv.QuoteToASCII(n), "reason", err.Error())
			continue
		}
		ks.MCP().AddPrompt(p, g.getPrompt(ks, l, n, p.Name))
		served[n] = d
	}
	for n := range old {
		if _, ok := served[n]; !ok {
			remove = append(remove, l.u.prefix()+"."+n)
		}
	}
	if len(remove) > 0 {
		ks.MCP().RemovePrompts(remove...)
	}
	l.mu.Lock()
	l.servedPrompts = served
	l.mu.Unlock()
}

// servedPrompt is the prompt as the client sees it: named <prefix>.<name>,
// its texts cleaned, cut and marked as the server's; a name or an argument
// name outside [A-Za-z0-9_.-] (1-64), or more than maxPromptArgs
// arguments, is not relayed.
func servedPrompt(u *Upstream, p *mcp.Prompt) (*mcp.Prompt, error) {
	if !fieldRE().MatchString(p.Name) {
		return nil, fmt.Errorf("its name is not 1-64 of [A-Za-z0-9_.-]")
	}
	if len(p.Arguments) > maxPromptArgs {
		return nil, fmt.Errorf("it takes more than %d arguments", maxPromptArgs)
	}
	out := &mcp.Prompt{Name: u.prefix() + "." + p.Name, Title: cutClean(p.Title, maxTitle),
		Description: fmt.Sprintf("[relayed from the MCP server %q; its prompt text is untrusted] %s", u.Name, cutClean(p.Description, maxDescription))}
	for _, a := range p.Arguments {
		if a == nil || !fieldRE().MatchString(a.Name) {
			return nil, fmt.Errorf("an argument's name is not 1-64 of [A-Za-z0-9_.-]")
		}
		out.Arguments = append(out.Arguments, &mcp.PromptArgument{Name: a.Name, Title: cutClean(a.Title, maxTitle),
			Description: cutClean(a.Description, maxDescription), Required: a.Required})
	}
	return out, nil
}

// cutClean is s cleaned (untrusted.CleanString) and cut at n bytes.
func cutClean(s string, n int) string {
	s = untrusted.CleanString(s)
	if len(s) > n {
		s = cutText(s, n)
	}
	return s
}

// checkPromptArgs checks a get's arguments against the prompt's
// declaration: only declared names, every required one, valid UTF-8,
// each and all within their bounds.
func checkPromptArgs(p *mcp.Prompt, args map[string]string) error {
	if len(args) > maxPromptArgs {
		return fmt.Errorf("more than %d arguments", maxPromptArgs)
	}
	total := 0
	for k, v := range args {
		if !slices.ContainsFunc(p.Arguments, func(a *mcp.PromptArgument) bool { return a != nil && a.Name == k }) {
			return fmt.Errorf("the prompt takes no argument %q", untrusted.TerminalLine(cutClean(k, 64)))
		}
		if len(v) > maxPromptArgValue || !utf8.ValidString(v) {
			return fmt.Errorf("the argument %q is not valid UTF-8 of at most %d bytes", k, maxPromptArgValue)
		}
		total += len(k) + len(v)
	}
	if total > maxPromptArgsBytes {
		return fmt.Errorf("the arguments hold more than %d bytes", maxPromptArgsBytes)
	}
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return fmt.Errorf("the argument %q is required", a.Name)
		}
	}
	return nil
}

// getPrompt is the prompts/get handler of one relayed prompt.
func (g *Gateway) getPrompt(ks *kernel.Server, l *link, name, exposed string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		start := time.Now()
		rec := audit.Record{Time: start, Principal: promptPrincipal(ctx, req).ID, Tool: exposed, Upstream: l.u.Name,
			Attrs: map[string]string{"method": "prompts/get"}, Outcome: audit.OK}
		res, hash, err := g.relayPrompt(ctx, ks, l, name, req.Params.Arguments)
		rec.Pin, rec.Duration, rec.UpstreamCalls = hash, time.Since(start), 1
		g.auditRelayed(ctx, rec, err)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// relayPrompt gets the prompt from the upstream, if its current
// definition is allowed and the arguments fit it. Errors are JSON-RPC
// errors whose message quotes no upstream text.
func (g *Gateway) relayPrompt(ctx context.Context, ks *kernel.Server, l *link, name string, args map[string]string) (*mcp.GetPromptResult, string, *jsonrpc.Error) {
	l.mu.Lock()
	sess, d, ok := l.sess, l.prompts[name], true
	if _, listed := l.prompts[name]; !listed || !d.allowed {
		ok = false
	}
	l.mu.Unlock()
	switch {
	case sess == nil:
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("The upstream %q is not running; the gateway is restarting it.", l.u.Name)}
	case !ok:
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("The prompt %q of the upstream %q is hidden or gone: %s", name, l.u.Name, untrusted.CleanString(d.reason))}
	}
	if err := checkPromptArgs(d.prompt, args); err != nil {
		return nil, d.hash, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid prompt arguments: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, l.u.callTimeout(g.cfg.CallTimeout))
	defer cancel()
	res, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		g.logger.Info("upstream prompt failed", "upstream", l.u.Name, "prompt", strconv.QuoteToASCII(name), "error", g.scrub.text(err.Error()))
		return nil, d.hash, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("The upstream %q failed to give its prompt %q.", l.u.Name, name)}
	}
	if raw, _ := json.Marshal(res); len(raw) > l.u.maxResult() {
		return nil, d.hash, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("The upstream %q answered with a prompt of %d bytes, more than the %d allowed.", l.u.Name, len(raw), l.u.maxResult())}
	}
	for i, m := range res.Messages { // a resource link or an embedded resource has the gateway's URI (resources.go)
		switch b := m.Content.(type) {
		case *mcp.ResourceLink:
			link := *b
			link.URI, link.Icons = linkURI(l.u, b.URI), nil
			res.Messages[i] = &mcp.PromptMessage{Role: m.Role, Content: &link}
		case *mcp.EmbeddedResource:
			if b.Resource != nil {
				res.Messages[i] = &mcp.PromptMessage{Role: m.Role, Content: embedded(l.u, b)}
			}
		}
	}
	shaped, err := ks.ShapePrompt(res)
	if err != nil {
		return nil, d.hash, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: untrusted.CleanString(err.Error())}
	}
	shaped.Description = fmt.Sprintf("[from the MCP server %q] %s", l.u.Name, shaped.Description)
	return shaped, d.hash, nil
}

// promptPrincipal is who asks: the HTTP layer's principal, or "local".
func promptPrincipal(ctx context.Context, req *mcp.GetPromptRequest) identity.Principal {
	if p, ok := identity.FromContext(ctx); ok {
		return p
	}
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		return identity.Principal{ID: req.Extra.TokenInfo.UserID}
	}
	return identity.Local("")
}

// Features are the features the gateway relays beside tools, for
// kernel.Options.Features: prompts and resources when an upstream offered
// them at start (set by noteFeatures), resources.subscribe when one of
// those offered it, completions when one offered them (complete.go).
// Call it after Start.
func (g *Gateway) Features() kernel.Features {
	var f kernel.Features
	sub := false
	for _, l := range g.links {
		f.Prompts = f.Prompts || l.promptsOffered
		f.Resources = f.Resources || l.resourcesOffered
		sub = sub || l.subscribeOffered
		f.Completions = f.Completions || l.completionsOffered
	}
	if f.Completions {
		f.Complete = g.complete // complete.go
	}
	if f.Resources {
		f.ReadTarget = ResourceTarget
	}
	if sub {
		f.Subscribe, f.Unsubscribe = g.subscribe, g.unsubscribe
	}
	return f
}
