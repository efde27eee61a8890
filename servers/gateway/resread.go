package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// A read or a subscription of a relayed resource (docs/gateway.md,
// "Resources"): the namespaced URI is turned back into the upstream's,
// put in canonical form (canonicalResourceURI: what is decided on and
// what the upstream receives), and must still be a resource the upstream
// listed or match one of its templates; then the upstream's allow and
// deny lists and the authorization policies (Action::"resources/read" on
// a Gateway::Resource) decide. A read is audited, its contents enveloped
// (kernel.Server.ShapeResourceContents) and capped.

// ResourceTarget is what a resources/read acts on, for authorization: the
// upstream and the resource's URI in canonical form.
var ResourceTarget = authz.ResourceType{Name: "Gateway::Resource", Attrs: map[string]authz.AttrType{
	"upstream": authz.String, "uri": authz.String,
}}

// canonicalResourceURI is a resource URI in canonical form: a URI with an
// authority (scheme://…) as canonicalURL writes it (dot segments resolved,
// host lower-cased, percent-encoding normalized); another URI (urn:…)
// checked the same way, its scheme lower-cased, otherwise unchanged.
func canonicalResourceURI(s string) (string, error) {
	scheme, rest, ok := strings.Cut(s, ":")
	if ok && strings.HasPrefix(rest, "//") {
		return canonicalURL(s)
	}
	if !ok || !validScheme(scheme) {
		return "", refuseTarget("the URI has no scheme")
	}
	if len(s) > maxURLBytes {
		return "", refuseTarget("the URI is longer than %d bytes", maxURLBytes)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c >= 0x7f || c == '\\':
			return "", refuseTarget("the URI holds white space, a control character, a backslash or a character outside ASCII")
		case c == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])):
			return "", refuseTarget("the URI holds a %% that is not followed by two hex digits")
		}
	}
	return strings.ToLower(scheme) + ":" + normalizePercent(rest), nil
}

// resourceListed reports whether the allow and deny lists let the
// canonical URI c be relayed: not under a deny_resources prefix, and under
// an allow_resources prefix when there are any. A template's literal start
// (open) is kept unless a deny prefix covers it whole; its reads are
// decided one URI at a time.
func (u *Upstream) resourceListed(c string, open bool) bool {
	for _, p := range u.DenyResources {
		if strings.HasPrefix(c, p) {
			return false
		}
	}
	if len(u.AllowResources) == 0 {
		return true
	}
	for _, p := range u.AllowResources {
		if strings.HasPrefix(c, p) || open && strings.HasPrefix(p, c) {
			return true
		}
	}
	return false
}

// readError is a read's refusal: a JSON-RPC error whose message quotes no
// upstream text, and its audit code.
type readError struct {
	rpc   *jsonrpc.Error
	code  string
	authz bool // the policies denied it
}

func refusedRead(code, format string, args ...any) *readError {
	return &readError{rpc: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}, code: code}
}

// resolveRead turns a namespaced URI of l into the upstream's to send
// (canonical, or a listed resource's URI as listed) and the definition it
// is read under (the resource, or the template registered as key); the
// lists and the policies decide on the canonical form.
func (g *Gateway) resolveRead(ks *kernel.Server, l *link, key string, template bool, ns string, p identity.Principal, transport string) (string, resourceDef, *readError) {
	_, raw, ok := g.upstreamURI(ns)
	if !ok {
		return "", resourceDef{}, refusedRead("invalid_params", "The URI is not one of the gateway's.")
	}
	c, err := canonicalResourceURI(raw)
	if err != nil {
		return "", resourceDef{}, refusedRead("invalid_params", "The resource URI has no canonical form: %s", strings.TrimPrefix(err.Error(), errTarget.Error()+": "))
	}
	l.mu.Lock()
	d, listed := l.resources[key]
	if template {
		d, listed = l.templates[key]
	}
	l.mu.Unlock()
	send := c // what the upstream receives: the canonical form, or a listed URI as it was listed
	switch {
	case !listed || !d.allowed:
		return c, d, refusedRead("failed_precondition", "The resource of the upstream %q is hidden or gone: %s", l.u.Name, untrusted.CleanString(d.reason))
	case !template && raw != key:
		return c, d, refusedRead("invalid_params", "The resource URI is not one the upstream %q listed.", l.u.Name)
	case !template:
		send = key
	case !matchesTemplate(d, c):
		return c, d, refusedRead("invalid_params", "The resource URI in canonical form does not match the upstream %q's template.", l.u.Name)
	}
	if !l.u.resourceListed(c, false) {
		return c, d, refusedRead("permission_denied", "The resource is not relayed from the upstream %q (allow_resources, deny_resources).", l.u.Name)
	}
	dec := ks.AuthorizeRead(p, transport, authz.Resource{Type: ResourceTarget.Name, ID: l.u.Name + ":" + c,
		Attrs: map[string]any{"upstream": l.u.Name, "uri": c}})
	if !dec.Allow {
		return c, d, &readError{rpc: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Permission denied: no authorization policy allows reading this resource."}, code: "permission_denied", authz: true}
	}
	return send, d, nil
}

// matchesTemplate reports whether uri matches the URI template t.
func matchesTemplate(d resourceDef, uri string) bool {
	return d.match != nil && d.match.MatchString(uri)
}

// templateRegexp is the expression a URI template matches, or nil when t
// is not a template (RFC 6570).
func templateRegexp(t string) *regexp.Regexp {
	tm, err := uritemplate.New(t)
	if err != nil {
		return nil
	}
	return tm.Regexp()
}

// readResource is the resources/read handler of one relayed resource, or
// of one template (key is its URI, or its URI template).
func (g *Gateway) readResource(ks *kernel.Server, l *link, key string, template bool) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		start := time.Now()
		p, transport := kernel.RequestPrincipal(ctx, req)
		rec := audit.Record{Time: start, Principal: p.ID, Tool: kernel.ReadAction, Upstream: l.u.Name,
			Attrs: map[string]string{"method": "resources/read"}, Outcome: audit.OK}
		uri, d, rerr := g.resolveRead(ks, l, key, template, req.Params.URI, p, transport)
		rec.Pin = d.hash
		switch {
		case ks.Authorizer() == nil:
		case rerr == nil:
			rec.Authz = "allow"
		case rerr.authz:
			rec.Authz = "deny"
		}
		var res *mcp.ReadResourceResult
		if rerr == nil {
			rec.UpstreamCalls = 1
			res, rerr = g.relayRead(ctx, ks, l, uri)
		}
		rec.Duration = time.Since(start)
		if rerr != nil {
			rec.Outcome, rec.ErrorCode = audit.Refused, rerr.code
			if rerr.code == "upstream_error" {
				rec.Outcome = audit.ToolError
			}
		}
		if g.auditSink != nil {
			g.auditSink.Write(ctx, rec)
		}
		if rerr != nil {
			return nil, rerr.rpc
		}
		return res, nil
	}
}

// relayRead reads the canonical uri from the upstream, caps the answer
// and shapes its contents.
func (g *Gateway) relayRead(ctx context.Context, ks *kernel.Server, l *link, uri string) (*mcp.ReadResourceResult, *readError) {
	l.mu.Lock()
	sess := l.sess
	l.mu.Unlock()
	fail := func(format string, args ...any) *readError {
		return &readError{rpc: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(format, args...)}, code: "upstream_error"}
	}
	if sess == nil {
		return nil, fail("The upstream %q is not running; the gateway is restarting it.", l.u.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, l.u.callTimeout(g.cfg.CallTimeout))
	defer cancel()
	res, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		g.logger.Info("upstream resource read failed", "upstream", l.u.Name, "error", g.scrub.text(err.Error()))
		return nil, fail("The upstream %q failed to read the resource.", l.u.Name)
	}
	if raw, _ := json.Marshal(res); len(raw) > l.u.maxResult() {
		return nil, fail("The upstream %q answered with a resource of %d bytes, more than the %d allowed.", l.u.Name, len(raw), l.u.maxResult())
	}
	cs, err := ks.ShapeResourceContents(res.Contents, func(s string) string { return linkURI(l.u, s) })
	if err != nil {
		return nil, fail("%s", untrusted.CleanString(err.Error()))
	}
	return &mcp.ReadResourceResult{Contents: cs}, nil
}

// subscribe serves resources/subscribe: the URI is resolved as a read
// would be, and the upstream is subscribed to the first time a client
// session subscribes to it (upSubscribe).
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) (err error) {
	start := time.Now()
	p, _ := kernel.RequestPrincipal(ctx, req)
	rec := audit.Record{Time: start, Principal: p.ID, Tool: "resources/subscribe", Attrs: map[string]string{"method": "resources/subscribe"}, Outcome: audit.OK}
	l, c, err := g.subscription(ctx, req, req.Params.URI)
	defer func() { // one audit record a subscription, as a read has
		if l != nil {
			rec.Upstream = l.u.Name
		}
		rec.Duration = time.Since(start)
		if err != nil {
			rec.Outcome, rec.ErrorCode = audit.Refused, "invalid_params"
		}
		if g.auditSink != nil {
			g.auditSink.Write(ctx, rec)
		}
	}()
	if err != nil {
		return err
	}
	l.mu.Lock()
	if n := l.subscriptions(); n >= maxSubscriptions && !l.subs[c][req.Session] {
		l.mu.Unlock()
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("The upstream %q has %d subscriptions, the most the gateway holds.", l.u.Name, maxSubscriptions)}
	}
	if l.subs == nil {
		l.subs = map[string]map[*mcp.ServerSession]bool{}
	}
	if l.subs[c] == nil {
		l.subs[c] = map[*mcp.ServerSession]bool{}
	}
	known := l.subs[c][req.Session]
	l.subs[c][req.Session] = true
	l.mu.Unlock()
	g.logger.Debug("resource subscribed", "upstream", l.u.Name)
	if err := l.upSubscribe(ctx, c); err != nil {
		if !known {
			l.drop(req.Session, c)
		}
		g.logger.Info("upstream resource subscription failed", "upstream", l.u.Name, "error", g.scrub.text(err.Error()))
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("The upstream %q refused the subscription.", l.u.Name)}
	}
	if !known && req.Session != nil {
		go l.forgetWhenGone(req.Session, c) // a session that ends without unsubscribing
	}
	return nil
}

// upSubscribe subscribes the upstream's session to c, unless it is
// subscribed already. The gateway stays subscribed after the last client
// left (an update then reaches no one): on 2026-07-28 a subscription is a
// subscriptions/listen stream, and a server that ends the old stream after
// the new one began (the go-sdk keys subscriptions by session) would drop
// both. It unsubscribes from those no client holds when it needs the room
// (maxSubscriptions URIs); a new upstream session starts with none.
func (l *link) upSubscribe(ctx context.Context, c string) error {
	l.mu.Lock()
	sess := l.sess
	if sess == nil || !offersSubscribe(sess) {
		l.mu.Unlock()
		return nil
	}
	if l.upSess != sess {
		l.upSess, l.upSubs = sess, map[string]bool{}
	}
	if l.upSubs[c] {
		l.mu.Unlock()
		return nil
	}
	var idle []string
	if len(l.upSubs) >= maxSubscriptions {
		for u := range l.upSubs {
			if len(l.subs[u]) == 0 {
				idle = append(idle, u)
				delete(l.upSubs, u)
			}
		}
	}
	l.upSubs[c] = true
	l.mu.Unlock()
	for _, u := range idle {
		_ = sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: u})
	}
	if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: c}); err != nil {
		l.mu.Lock()
		delete(l.upSubs, c)
		l.mu.Unlock()
		return err
	}
	return nil
}

// maxSubscriptions bounds the client sessions' subscriptions to one
// upstream's resources (a session and a URI each).
const maxSubscriptions = 1024

// subscriptions counts them; l.mu is held.
func (l *link) subscriptions() int {
	n := 0
	for _, ss := range l.subs {
		n += len(ss)
	}
	return n
}

// unsubscribe serves resources/unsubscribe.
func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	l, raw, ok := g.upstreamURI(req.Params.URI)
	if !ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "The URI is not one of the gateway's."}
	}
	c, err := canonicalResourceURI(raw)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "The resource URI has no canonical form."}
	}
	l.drop(req.Session, c)
	return nil
}

// drop ends the subscription of ss to the upstream's canonical uri c (the
// upstream's stays: upSubscribe).
func (l *link) drop(ss *mcp.ServerSession, c string) {
	l.mu.Lock()
	delete(l.subs[c], ss)
	if len(l.subs[c]) == 0 {
		delete(l.subs, c)
	}
	l.mu.Unlock()
	l.g.logger.Debug("resource unsubscribed", "upstream", l.u.Name)
}

// forgetWhenGone drops the subscription of ss to c when ss ends.
func (l *link) forgetWhenGone(ss *mcp.ServerSession, c string) {
	_ = ss.Wait()
	l.drop(ss, c)
}

// subscription resolves a subscription's URI as a read's: the definition
// it falls under, the lists and the policies. The link is returned with
// an error too, when the URI names one.
func (g *Gateway) subscription(ctx context.Context, req mcp.Request, ns string) (*link, string, error) {
	g.ksMu.Lock()
	ks := g.ks
	g.ksMu.Unlock()
	l, raw, ok := g.upstreamURI(ns)
	if !ok || ks == nil {
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "The URI is not one of the gateway's."}
	}
	key, template, found := l.definitionOf(raw)
	if !found {
		return l, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("The upstream %q relays no resource of this URI.", l.u.Name)}
	}
	p, transport := kernel.RequestPrincipal(ctx, req)
	c, _, rerr := g.resolveRead(ks, l, key, template, ns, p, transport)
	if rerr != nil {
		return l, "", rerr.rpc
	}
	return l, c, nil
}

// definitionOf finds the served resource of uri, or the first served
// template (in order) it matches.
func (l *link) definitionOf(uri string) (key string, template, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.servedResources[uri]; ok {
		return uri, false, true
	}
	keys := make([]string, 0, len(l.servedTemplates))
	for k := range l.servedTemplates {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if matchesTemplate(l.servedTemplates[k], uri) {
			return k, true, true
		}
	}
	return "", false, false
}
