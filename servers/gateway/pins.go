package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/servers/gateway/pin"
)

// ListPinner is a Pinner that checks a whole listing at once, and so can
// tell a renamed tool from a second tool that shares a pinned definition
// (*pin.Store implements it). The gateway prefers it to Check.
type ListPinner interface {
	Pinner
	CheckList(ctx context.Context, upstream string, tools []json.RawMessage) []pin.Result
}

// checkPins asks the Pinner about every definition of one listing, in the
// upstream's order, and records each verdict in its def. A definition the
// Pinner refuses (changed, renamed, new under approval, or unpinnable) is
// hidden, and the gateway logs which upstream changed what; a name the
// listing repeated is hidden without asking the Pinner (duplicated).
func (g *Gateway) checkPins(ctx context.Context, l *link, defs map[string]def, order []string) {
	order = slices.DeleteFunc(slices.Clone(order), func(n string) bool {
		if d := defs[n]; duplicated(d) {
			d.allowed, d.reason = false, "the upstream listed more than one tool under this name"
			defs[n] = d
			g.logger.Warn("upstream tool hidden", "upstream", l.u.Name, "tool", strconv.QuoteToASCII(n), "reason", d.reason)
			return true
		}
		return false
	})
	raws := make([]json.RawMessage, len(order))
	for i, n := range order {
		raws[i] = defs[n].raw
	}
	var results []pin.Result
	if lp, ok := g.pinner.(ListPinner); ok {
		results = lp.CheckList(ctx, l.u.Name, raws)
	} else {
		results = make([]pin.Result, len(raws))
		for i, raw := range raws {
			r := &results[i]
			r.Hash, r.Allowed, r.Reason, r.Err = g.pinner.Check(l.u.Name, raw)
		}
	}
	for i, n := range order {
		d := defs[n]
		r := results[i]
		d.hash = r.Hash
		d.allowed, d.reason, d.unchecked = g.pinVerdict(r)
		if !d.allowed && l.u.exposed(n) {
			g.logger.Warn("upstream tool hidden", "upstream", l.u.Name, "tool", strconv.QuoteToASCII(n), "reason", untrusted.CleanString(d.reason))
		}
		defs[n] = d
	}
}

// recheckAfter is how long after a listing the Pinner could not decide
// (the shared store failed) the gateway checks that upstream's tools again.
var recheckAfter = 5 * time.Second

// recheckUnchecked schedules a relist of sess when a definition of defs
// could not be checked, so that its tools come back by themselves once the
// store answers; a relist that still cannot check schedules the next.
func (l *link) recheckUnchecked(sess *mcp.ClientSession, defs map[string]def) {
	for _, d := range defs {
		if d.unchecked {
			time.AfterFunc(recheckAfter, func() {
				if l.queued.CompareAndSwap(false, true) {
					l.relist(sess)
				}
			})
			return
		}
	}
}

// pinVerdict is what one definition's pin check decided — of a tool, a
// prompt, a resource — allowed, or why not; unchecked when the Pinner could
// not decide (the shared store failed), its error scrubbed.
func (g *Gateway) pinVerdict(r pin.Result) (allowed bool, reason string, unchecked bool) {
	if r.Err != nil {
		return false, fmt.Sprintf("its definition cannot be checked: %s", g.scrub.text(r.Err.Error())), true
	}
	return r.Allowed, r.Reason, false
}

// hiddenError is what a call of a hidden tool answers: store_unavailable
// when its definition could not be checked (nothing else is known of it),
// else failed_precondition with the reason.
func hiddenError(l *link, name string, d def) *kernel.Error {
	if d.unchecked {
		return &kernel.Error{Code: kernel.StoreUnavailable,
			Message: fmt.Sprintf("The tool %q of the upstream %q cannot be checked against its pinned definition: the shared state store is unreachable, so it is not offered and nothing was sent.", name, l.u.Name),
			Hint:    "Try again shortly: the gateway checks it again by itself once the store answers. Operator: check the shared store (Redis)."}
	}
	reason := d.reason
	return &kernel.Error{Code: kernel.FailedPrecondition,
		Message: fmt.Sprintf("The tool %q of the upstream %q is hidden: %s", name, l.u.Name, untrusted.CleanString(reason)),
		Hint:    "The operator must review and approve its definition (bulwark gateway approve); the gateway shows it again when the upstream next lists its tools."}
}

// Attach gives the gateway the kernel server that serves its tools, built
// from Tools() with kernel.Options.DynamicTools: a call of a hidden tool is
// answered with the reason it is hidden, and later changes to an upstream's
// tools (notifications/tools/list_changed, a restart) add and withdraw
// tools on it, which tells the clients.
func (g *Gateway) Attach(ks *kernel.Server) error {
	g.ksMu.Lock()
	g.ks = ks
	g.ksMu.Unlock()
	for _, l := range g.links {
		l.listMu.Lock()
		l.mu.Lock()
		served, defs := l.served, l.defs
		l.mu.Unlock()
		// ks was built from Tools(); a listing since then is published
		// now, and the hidden tools are withdrawn (their calls get why).
		err := g.publish(l, served, defs)
		if err == nil {
			g.publishPrompts(l)   // prompts.go
			g.publishResources(l) // resources.go
		}
		l.listMu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// publish brings the kernel's tools of upstream l from old to defs: it
// withdraws the hidden and the gone, and adds the new and the changed. The
// link's listMu is held, so publications of one upstream are in order.
func (g *Gateway) publish(l *link, old, defs map[string]def) error {
	g.ksMu.Lock()
	ks := g.ks
	g.ksMu.Unlock()
	if ks == nil {
		return nil
	}
	var add []kernel.Tool
	for n, d := range defs {
		if !l.u.exposed(n) {
			continue
		}
		exposed := l.u.prefix() + "." + n
		if !d.allowed {
			if err := ks.WithdrawTool(exposed, hiddenError(l, n, d)); err != nil {
				return err
			}
			continue
		}
		if o, ok := old[n]; ok && o.allowed && string(o.raw) == string(d.raw) {
			continue
		}
		t, err := g.toolOf(l, d)
		if err != nil {
			g.logger.Warn("upstream tool not exposed", "upstream", l.u.Name, "tool", strconv.QuoteToASCII(n), "reason", err.Error())
			continue
		}
		add = append(add, t)
	}
	for n := range old {
		if _, ok := defs[n]; !ok && l.u.exposed(n) {
			gone := &kernel.Error{Code: kernel.UpstreamUnavailable, Message: fmt.Sprintf("The upstream %q no longer offers the tool %q.", l.u.Name, n)}
			if err := ks.WithdrawTool(l.u.prefix()+"."+n, gone); err != nil {
				return err
			}
		}
	}
	if len(add) == 0 {
		return nil
	}
	skipped, err := ks.AddTools(add...)
	if len(skipped) > 0 {
		g.logger.Info("upstream tools left out by the gateway's own filters", "upstream", l.u.Name, "tools", skipped)
	}
	return err
}

// relist re-reads the tool list of sess after the upstream said it
// changed (notifications/tools/list_changed), checks every definition with
// the Pinner, and publishes the changes: a changed or renamed tool is
// withdrawn until approved, a new one pinned on first use is added, and
// the kernel tells the clients. Notifications that arrive while a relist
// waits are covered by it; one that arrives while it lists queues one more
// (an upstream that floods them costs one listing at a time, never a
// goroutine each).
func (l *link) relist(sess *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	l.listMu.Lock()
	defer l.listMu.Unlock()
	l.queued.Store(false)
	l.mu.Lock()
	rec, current := l.rec, l.sess == sess
	l.mu.Unlock()
	if !current {
		return // a session that ended; its successor listed its own tools
	}
	defs, order, err := listTools(ctx, sess, rec)
	if err != nil {
		l.g.logger.Warn("upstream tool list changed but could not be read", "upstream", l.u.Name, "error", l.g.scrub.text(err.Error()))
		return
	}
	l.g.checkPins(ctx, l, defs, order)
	l.recheckUnchecked(sess, defs)
	l.mu.Lock()
	if l.sess != sess {
		l.mu.Unlock()
		return
	}
	old := l.defs
	l.defs = defs
	l.mu.Unlock()
	l.g.logger.Info("upstream tool list changed", "upstream", l.u.Name, "tools", len(defs))
	if err := l.g.publish(l, old, defs); err != nil {
		l.g.logger.Warn("upstream tools could not be updated", "upstream", l.u.Name, "error", err.Error())
	}
}

// recordPin records hash as the pin of exposed's last check, for the audit.
// A sync.Map's Store allocates even for the value it holds: the hash
// changes only when the definition does, so a call checks before it stores.
func recordPin(pins *sync.Map, exposed, hash string) {
	if h, ok := pins.Load(exposed); !ok || h.(string) != hash {
		pins.Store(exposed, hash)
	}
}

// checkPin returns the Pinner's verdict on the tool's current definition,
// given when the upstream last listed its tools (checkPins).
func (g *Gateway) checkPin(l *link, exposed, name string) (*mcp.ClientSession, string, error) {
	sess, d, err := l.current(name)
	if err != nil {
		return nil, "", err
	}
	recordPin(&g.pins, exposed, d.hash)
	if !d.allowed {
		return nil, "", hiddenError(l, name, d)
	}
	return sess, d.hash, nil
}

// onListChanged re-reads the tool list, checks it with the Pinner and
// publishes the changes (relist, pins.go).
func (l *link) onListChanged(ctx context.Context, req *mcp.ToolListChangedRequest) {
	if l.queued.CompareAndSwap(false, true) {
		go l.relist(req.Session)
	}
}
