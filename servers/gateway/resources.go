package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Resources are relayed like prompts (docs/gateway.md, "Resources"): an
// upstream that declares resources has its resources and resource
// templates listed at every start and at every
// notifications/resources/list_changed, each served under its namespaced
// URI, "bulwark://<prefix>/" followed by the upstream's URI exactly as it
// wrote it (reversible: the gateway strips the prefix; a template keeps
// its expressions). Definitions are pinned under the Pinner keys
// "<upstream>/resources" and "<upstream>/resource-templates", keyed by
// URI (a changed one is hidden until approved); names, titles and
// descriptions are cleaned, cut and marked as the server's. A read
// (resread.go) goes through the allow and deny lists, the authorization
// policies and the audit, with the URI in canonical form.

// Bounds of the relayed resources.
const (
	maxResources = 1000 // resources of one upstream, and templates
	maxURIBytes  = 2048 // of an upstream's URI or URI template
)

// resourceScheme starts every namespaced URI: bulwark://<prefix>/<uri>.
const resourceScheme = "bulwark://"

// resourceDef is a resource or a resource template as the upstream last
// listed it (one of res and tmpl), and the Pinner's verdict. raw is what
// is pinned: {"name": <URI or URI template>, "resource"|"template": the
// definition as the go-sdk decoded it}, so its pin is keyed by URI.
type resourceDef struct {
	res     *mcp.Resource
	tmpl    *mcp.ResourceTemplate
	raw     json.RawMessage
	hash    string
	allowed bool
	reason  string
	// match is a template's expression, compiled once when it is listed:
	// a read never compiles an upstream's template (nil: not one)
	match *regexp.Regexp
}

func resourcePinKey(u *Upstream) string { return u.Name + "/resources" }
func templatePinKey(u *Upstream) string { return u.Name + "/resource-templates" }

// namespaceURI is the URI the client sees for the upstream's uri.
func namespaceURI(u *Upstream, uri string) string { return resourceScheme + u.prefix() + "/" + uri }

// upstreamURI is the link and the upstream's URI of a namespaced URI.
func (g *Gateway) upstreamURI(ns string) (*link, string, bool) {
	rest, ok := strings.CutPrefix(ns, resourceScheme)
	if !ok {
		return nil, "", false
	}
	prefix, uri, ok := strings.Cut(rest, "/")
	if !ok || uri == "" {
		return nil, "", false
	}
	for _, l := range g.links {
		if l.u.prefix() == prefix {
			return l, uri, true
		}
	}
	return nil, "", false
}

// offersResources reports whether the session's server declares resources.
func offersResources(sess *mcp.ClientSession) bool {
	r := sess.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Resources != nil
}

// offersSubscribe reports whether it lets a client subscribe to them.
func offersSubscribe(sess *mcp.ClientSession) bool {
	return offersResources(sess) && sess.InitializeResult().Capabilities.Resources.Subscribe
}

// listPages reads every page of one of an upstream's lists, within
// maxResources items and maxListPages pages; key names an item, and an
// item listed twice is kept out (dups).
func listPages[T any](what string, page func(cursor string) ([]T, string, error), key func(T) string) (items map[string]T, order []string, dups map[string]bool, err error) {
	items, dups = map[string]T{}, map[string]bool{}
	seen := map[string]bool{}
	cursor := ""
	for n := 1; ; n++ {
		got, next, err := page(cursor)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("listing %s: %w", what, err)
		}
		for _, it := range got {
			k := key(it)
			if _, dup := items[k]; dup {
				dups[k] = true
				continue
			}
			if len(items) == maxResources {
				return nil, nil, nil, fmt.Errorf("listing %s: more than %d", what, maxResources)
			}
			items[k] = it
			order = append(order, k)
		}
		switch {
		case next == "":
			return items, order, dups, nil
		case seen[next]:
			return nil, nil, nil, fmt.Errorf("listing %s: the upstream's paging loops (page %d)", what, n)
		case n == maxListPages:
			return nil, nil, nil, fmt.Errorf("listing %s: the upstream's paging did not end within %d pages", what, maxListPages)
		}
		seen[next] = true
		cursor = next
	}
}

// listResources lists the resources and the templates of sess, as
// definitions keyed by URI and by URI template.
func listResources(ctx context.Context, sess *mcp.ClientSession) (res, tmpl map[string]resourceDef, err error) {
	rs, rorder, rdups, err := listPages("resources", func(c string) ([]*mcp.Resource, string, error) {
		r, err := sess.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
		if err != nil {
			return nil, "", err
		}
		return slices.DeleteFunc(r.Resources, func(x *mcp.Resource) bool { return x == nil }), r.NextCursor, nil
	}, func(r *mcp.Resource) string { return r.URI })
	if err != nil {
		return nil, nil, err
	}
	ts, torder, tdups, err := listPages("resource templates", func(c string) ([]*mcp.ResourceTemplate, string, error) {
		r, err := sess.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: c})
		if err != nil {
			return nil, "", err
		}
		return slices.DeleteFunc(r.ResourceTemplates, func(x *mcp.ResourceTemplate) bool { return x == nil }), r.NextCursor, nil
	}, func(t *mcp.ResourceTemplate) string { return t.URITemplate })
	if err != nil {
		return nil, nil, err
	}
	res, tmpl = map[string]resourceDef{}, map[string]resourceDef{}
	for _, k := range rorder {
		raw, _ := json.Marshal(map[string]any{"name": k, "resource": rs[k]})
		res[k] = resourceDef{res: rs[k], raw: raw}
	}
	for _, k := range torder {
		raw, _ := json.Marshal(map[string]any{"name": k, "template": ts[k]})
		tmpl[k] = resourceDef{tmpl: ts[k], raw: raw, match: templateRegexp(k)}
	}
	for k := range rdups {
		res[k] = resourceDef{res: rs[k], reason: "the upstream listed more than one resource under this URI"}
	}
	for k := range tdups {
		tmpl[k] = resourceDef{tmpl: ts[k], reason: "the upstream listed more than one resource template under this URI template"}
	}
	return res, tmpl, nil
}

// checkResourcePins asks the Pinner about every definition of one listing
// (resources or templates, under key).
func (g *Gateway) checkResourcePins(ctx context.Context, l *link, key string, defs map[string]resourceDef) {
	var order []string
	for k, d := range defs {
		if d.reason == "" {
			order = append(order, k)
		}
	}
	slices.Sort(order)
	raws := make([]json.RawMessage, len(order))
	for i, k := range order {
		raws[i] = defs[k].raw
	}
	results := g.pinResults(ctx, key, raws)
	for i, k := range order {
		d, r := defs[k], results[i]
		d.hash = r.Hash
		d.allowed, d.reason, _ = g.pinVerdict(r)
		defs[k] = d
	}
	for k, d := range defs {
		if !d.allowed {
			g.logger.Warn("upstream resource hidden", "upstream", l.u.Name, "uri", strconv.QuoteToASCII(cutClean(k, 256)), "reason", untrusted.CleanString(d.reason))
		}
	}
}

// refreshResources lists the resources of sess (when its server declares
// them), checks them and publishes the changes; it subscribes again to
// what clients subscribed to (a restarted upstream forgot). The link's
// listMu is held.
func (g *Gateway) refreshResources(ctx context.Context, l *link, sess *mcp.ClientSession) {
	var res, tmpl map[string]resourceDef
	if offersResources(sess) {
		var err error
		if res, tmpl, err = listResources(ctx, sess); err != nil {
			g.logger.Warn("upstream resources not relayed", "upstream", l.u.Name, "error", g.scrub.text(err.Error()))
			res, tmpl = nil, nil
		} else {
			g.checkResourcePins(ctx, l, resourcePinKey(l.u), res)
			g.checkResourcePins(ctx, l, templatePinKey(l.u), tmpl)
		}
	}
	l.mu.Lock()
	l.resources, l.templates = res, tmpl
	subs := make([]string, 0, len(l.subs))
	for uri := range l.subs {
		subs = append(subs, uri)
	}
	l.mu.Unlock()
	g.publishResources(l)
	for _, uri := range subs { // a new session is subscribed to none (upSubscribe)
		if err := l.upSubscribe(ctx, uri); err != nil {
			g.logger.Warn("upstream resource subscription not renewed", "upstream", l.u.Name, "error", g.scrub.text(err.Error()))
		}
	}
}

// onResourcesChanged re-reads the resources (notifications/resources/list_changed).
func (l *link) onResourcesChanged(_ context.Context, req *mcp.ResourceListChangedRequest) {
	l.refreshLater(req.Session, l.g.refreshResources)
}

// onResourceUpdated tells the clients that subscribed to the resource
// (notifications/resources/updated): only for a URI a client subscribed
// to through the gateway, namespaced; the upstream's _meta is not relayed.
func (l *link) onResourceUpdated(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req.Params == nil {
		return
	}
	l.mu.Lock()
	_, subscribed := l.subs[req.Params.URI]
	l.mu.Unlock()
	l.g.ksMu.Lock()
	ks := l.g.ks
	l.g.ksMu.Unlock()
	if !subscribed || ks == nil {
		return
	}
	_ = ks.MCP().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: namespaceURI(l.u, req.Params.URI)})
}

// publishResources brings the kernel's resources and templates of l to
// its current listing. The link's listMu is held.
func (g *Gateway) publishResources(l *link) {
	g.ksMu.Lock()
	ks := g.ks
	g.ksMu.Unlock()
	if ks == nil {
		return
	}
	l.mu.Lock()
	res, tmpl, oldRes, oldTmpl := l.resources, l.templates, l.servedResources, l.servedTemplates
	l.mu.Unlock()
	served := map[string]resourceDef{}
	for k, d := range res {
		if !g.relayable(l, k, d) {
			continue
		}
		if o, ok := oldRes[k]; !ok || string(o.raw) != string(d.raw) {
			r, err := servedResource(l.u, d.res)
			if err != nil {
				g.logger.Warn("upstream resource not relayed", "upstream", l.u.Name, "uri", strconv.QuoteToASCII(cutClean(k, 256)), "reason", err.Error())
				continue
			}
			ks.MCP().AddResource(r, g.readResource(ks, l, k, false))
		}
		served[k] = d
	}
	var gone []string
	for k := range oldRes {
		if _, ok := served[k]; !ok {
			gone = append(gone, namespaceURI(l.u, k))
		}
	}
	if len(gone) > 0 {
		ks.MCP().RemoveResources(gone...)
	}
	servedT := map[string]resourceDef{}
	for k, d := range tmpl {
		if !g.relayable(l, k, d) {
			continue
		}
		if o, ok := oldTmpl[k]; !ok || string(o.raw) != string(d.raw) {
			t, err := servedTemplate(l.u, d.tmpl)
			if err != nil {
				g.logger.Warn("upstream resource template not relayed", "upstream", l.u.Name, "uri_template", strconv.QuoteToASCII(cutClean(k, 256)), "reason", err.Error())
				continue
			}
			ks.MCP().AddResourceTemplate(t, g.readResource(ks, l, k, true))
		}
		servedT[k] = d
	}
	gone = gone[:0]
	for k := range oldTmpl {
		if _, ok := servedT[k]; !ok {
			gone = append(gone, namespaceURI(l.u, k))
		}
	}
	if len(gone) > 0 {
		ks.MCP().RemoveResourceTemplates(gone...)
	}
	l.mu.Lock()
	l.servedResources, l.servedTemplates = served, servedT
	l.mu.Unlock()
}

// relayable reports whether a listed definition is served: allowed by the
// Pinner, and its URI (or its template's literal start) not kept out by
// the upstream's allow and deny lists.
func (g *Gateway) relayable(l *link, key string, d resourceDef) bool {
	if !d.allowed {
		return false
	}
	lit := key
	if d.tmpl != nil {
		lit, _, _ = strings.Cut(key, "{")
	}
	c, err := canonicalResourceURI(lit)
	switch {
	case err == nil:
	case d.tmpl != nil && !strings.Contains(lit, ":"):
		c = lit // a template whose scheme is a variable: its reads decide
	default:
		return false
	}
	return l.u.resourceListed(c, d.tmpl != nil)
}

// servedResource is the resource as the client sees it: its URI
// namespaced, its texts cleaned, cut and marked as the server's, its
// media type checked; icons, annotations and _meta are not relayed.
func servedResource(u *Upstream, r *mcp.Resource) (*mcp.Resource, error) {
	uri, err := servedURI(u, r.URI)
	if err != nil {
		return nil, err
	}
	mt, _ := untrusted.MediaType(r.MIMEType)
	return &mcp.Resource{URI: uri, Name: cutClean(r.Name, maxTitle), Title: cutClean(r.Title, maxTitle), MIMEType: mt, Size: r.Size,
		Description: fmt.Sprintf("[relayed from the MCP server %q; its text is untrusted] %s", u.Name, cutClean(r.Description, maxDescription))}, nil
}

// servedTemplate is a resource template as the client sees it, likewise;
// the namespaced template must still be one (RFC 6570).
func servedTemplate(u *Upstream, t *mcp.ResourceTemplate) (*mcp.ResourceTemplate, error) {
	lit, _, _ := strings.Cut(t.URITemplate, "{")
	if _, err := servedURI(u, lit); err != nil && lit != "" {
		return nil, err
	}
	ns := namespaceURI(u, t.URITemplate)
	if len(t.URITemplate) > maxURIBytes || !printableASCII(t.URITemplate) {
		return nil, fmt.Errorf("its URI template is longer than %d bytes or holds a character outside printable ASCII", maxURIBytes)
	}
	if _, err := uritemplate.New(ns); err != nil {
		return nil, fmt.Errorf("its URI template is not one (RFC 6570)")
	}
	mt, _ := untrusted.MediaType(t.MIMEType)
	return &mcp.ResourceTemplate{URITemplate: ns, Name: cutClean(t.Name, maxTitle), Title: cutClean(t.Title, maxTitle), MIMEType: mt,
		Description: fmt.Sprintf("[relayed from the MCP server %q; its text is untrusted] %s", u.Name, cutClean(t.Description, maxDescription))}, nil
}

// servedURI is the namespaced form of an upstream's URI, which must be a
// URI (RFC 3986) of at most maxURIBytes.
func servedURI(u *Upstream, uri string) (string, error) {
	if len(uri) > maxURIBytes || !untrusted.URI(uri) {
		return "", fmt.Errorf("its URI is not a URI (RFC 3986) of at most %d bytes", maxURIBytes)
	}
	ns := namespaceURI(u, uri)
	if _, err := url.Parse(ns); err != nil {
		return "", fmt.Errorf("its URI cannot be namespaced")
	}
	return ns, nil
}

// printableASCII reports whether s is printable ASCII.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// linkURI is a resource link's URI as the client sees it (gateway.go):
// namespaced when it is a URI, else unchanged (the kernel replaces it).
func linkURI(u *Upstream, uri string) string {
	if ns, err := servedURI(u, uri); err == nil {
		return ns
	}
	return uri
}
