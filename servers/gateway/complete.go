package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Completions are relayed for the prompts and the resource templates the
// gateway relays (docs/gateway.md, "Completions"): completion/complete
// names a relayed prompt (<prefix>.<prompt>) or a relayed template
// (bulwark://<prefix>/<its URI template>) and one of its arguments (a
// prompt's declared argument, a template's variable); the request is
// checked and bounded before it is sent, the upstream's answer cut to
// maxCompletions values, each cleaned and cut, and audited.

// Bounds of a completion.
const (
	maxCompletions     = 100  // values of one answer (the MCP limit)
	maxCompletionValue = 1024 // bytes of one value
)

// offersCompletions reports whether the session's server declares completions.
func offersCompletions(sess *mcp.ClientSession) bool {
	r := sess.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Completions != nil
}

// complete serves completion/complete.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	start := time.Now()
	p, _ := kernel.RequestPrincipal(ctx, req)
	rec := audit.Record{Time: start, Principal: p.ID, Tool: "completion/complete", Attrs: map[string]string{"method": "completion/complete"}, Outcome: audit.OK}
	res, l, err := g.relayCompletion(ctx, req.Params)
	if l != nil {
		rec.Upstream, rec.UpstreamCalls = l.u.Name, 1
	}
	rec.Duration = time.Since(start)
	g.auditRelayed(ctx, rec, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// completionTarget resolves a completion's reference: the link, the
// upstream's reference, and whether the argument belongs to it.
func (g *Gateway) completionTarget(ref *mcp.CompleteReference, arg string) (*link, *mcp.CompleteReference, error) {
	if ref == nil {
		return nil, nil, fmt.Errorf("no reference")
	}
	switch ref.Type {
	case "ref/prompt":
		prefix, name, _ := strings.Cut(ref.Name, ".")
		for _, l := range g.links {
			if l.u.prefix() != prefix {
				continue
			}
			l.mu.Lock()
			d, ok := l.servedPrompts[name]
			l.mu.Unlock()
			if !ok {
				break
			}
			if !slices.ContainsFunc(d.prompt.Arguments, func(a *mcp.PromptArgument) bool { return a != nil && a.Name == arg }) {
				return nil, nil, fmt.Errorf("the prompt takes no argument %q", untrusted.TerminalLine(cutClean(arg, 64)))
			}
			return l, &mcp.CompleteReference{Type: ref.Type, Name: name}, nil
		}
		return nil, nil, fmt.Errorf("no prompt of this name is relayed")
	case "ref/resource":
		l, key, ok := g.upstreamURI(ref.URI)
		if !ok {
			break
		}
		l.mu.Lock()
		_, served := l.servedTemplates[key]
		l.mu.Unlock()
		if !served {
			break
		}
		t, err := uritemplate.New(key)
		if err != nil || !slices.Contains(t.Varnames(), arg) {
			return nil, nil, fmt.Errorf("the template has no variable %q", untrusted.TerminalLine(cutClean(arg, 64)))
		}
		return l, &mcp.CompleteReference{Type: ref.Type, URI: key}, nil
	}
	return nil, nil, fmt.Errorf("no relayed prompt or resource template is named by this reference")
}

// checkCompletionArgs bounds the value being completed and the context's
// arguments as a prompt's arguments are bounded.
func checkCompletionArgs(p *mcp.CompleteParams) error {
	if len(p.Argument.Value) > maxPromptArgValue || !utf8.ValidString(p.Argument.Value) {
		return fmt.Errorf("the value is not valid UTF-8 of at most %d bytes", maxPromptArgValue)
	}
	if p.Context == nil {
		return nil
	}
	if len(p.Context.Arguments) > maxPromptArgs {
		return fmt.Errorf("the context holds more than %d arguments", maxPromptArgs)
	}
	total := 0
	for k, v := range p.Context.Arguments {
		if !utf8.ValidString(k) || !utf8.ValidString(v) || len(v) > maxPromptArgValue {
			return fmt.Errorf("a context argument is not valid UTF-8 of at most %d bytes", maxPromptArgValue)
		}
		total += len(k) + len(v)
	}
	if total > maxPromptArgsBytes {
		return fmt.Errorf("the context's arguments hold more than %d bytes", maxPromptArgsBytes)
	}
	return nil
}

// relayCompletion checks the request, asks the upstream and shapes its
// answer. Errors are JSON-RPC errors whose message quotes no upstream text.
func (g *Gateway) relayCompletion(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, *link, *jsonrpc.Error) {
	l, ref, err := g.completionTarget(p.Ref, p.Argument.Name)
	if err == nil {
		err = checkCompletionArgs(p)
	}
	if err != nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid completion request: " + err.Error()}
	}
	l.mu.Lock()
	sess := l.sess
	l.mu.Unlock()
	if sess == nil || !offersCompletions(sess) {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, l, nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.u.callTimeout(g.cfg.CallTimeout))
	defer cancel()
	res, rerr := sess.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: p.Argument, Context: p.Context})
	if rerr != nil {
		g.logger.Info("upstream completion failed", "upstream", l.u.Name, "error", g.scrub.text(rerr.Error()))
		return nil, l, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("The upstream %q failed to complete the argument.", l.u.Name)}
	}
	return shapeCompletion(res), l, nil
}

// shapeCompletion keeps at most maxCompletions values, each cleaned and
// cut at maxCompletionValue bytes; more values than kept is hasMore.
func shapeCompletion(res *mcp.CompleteResult) *mcp.CompleteResult {
	c := res.Completion
	out := mcp.CompletionResultDetails{Values: make([]string, 0, min(len(c.Values), maxCompletions)), HasMore: c.HasMore || len(c.Values) > maxCompletions}
	for i, v := range c.Values {
		if i == maxCompletions {
			break
		}
		out.Values = append(out.Values, cutClean(v, maxCompletionValue))
	}
	if c.Total >= len(out.Values) {
		out.Total = c.Total
	}
	return &mcp.CompleteResult{Completion: out}
}
