package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Supervision limits.
const (
	backoffMin     = 250 * time.Millisecond
	backoffMax     = 30 * time.Second
	healthyAfter   = time.Minute // a session that lived this long resets the backoff
	connectTimeout = 30 * time.Second
	maxTools       = 1000
)

// def is a tool definition as the upstream last sent it, and the Pinner's
// verdict on it (checkPins).
type def struct {
	tool    *mcp.Tool
	raw     json.RawMessage
	hash    string
	allowed bool
	reason  string // why it is hidden
	// unchecked: the Pinner could not decide (the shared store failed);
	// calls answer store_unavailable and the gateway checks again
	// (recheckUnchecked)
	unchecked bool
}

// link is the gateway's connection to one upstream, supervised: a session
// that ends (a crash, an answer over the cap) is replaced, with backoff.
type link struct {
	u      *Upstream
	g      *Gateway
	client *mcp.Client

	listMu sync.Mutex  // one listing (and its publication) at a time
	queued atomic.Bool // a relist waits: further notifications add none

	mu       sync.Mutex
	sess     *mcp.ClientSession
	conn     *stdioConn // the session's connection to a child: relayed calls go on it (rawcall.go)
	hconn    *httpConn  // a URL upstream's session, for task requests (httptask.go)
	proc     *process
	rec      *rawLists // the session's raw tools/list results
	defs     map[string]def
	served   map[string]def // the defs Tools() last returned
	down     string         // why there is no session, for the tool error
	restarts int

	calls   callTable  // progress token -> call (calls.go)
	grace   graceQueue // forgets finished calls after notifyGrace
	flights flights    // calls of a relaying upstream (parked.go)
	inCalls atomic.Int64
	nextTok atomic.Uint64

	refusedAsks atomic.Uint64 // questions the gateway refused the upstream (asks.go)
	// set once at Start (features.go)
	withheld, unrelayed []string
	taskTools           []string // tools it runs only as tasks, whose tasks are not relayed: not exposed (features.go)
	taskOnly            []string // tools it runs only as tasks, relayed to 2025-11-25 clients only (tasks.go)
	promptsOffered      bool
	resourcesOffered    bool
	subscribeOffered    bool
	completionsOffered  bool

	prompts       map[string]promptDef // the last listing (prompts.go)
	servedPrompts map[string]promptDef // what the kernel serves of it

	resources, templates             map[string]resourceDef                 // the last listing (resources.go)
	servedResources, servedTemplates map[string]resourceDef                 // what the kernel serves of it
	subs                             map[string]map[*mcp.ServerSession]bool // upstream URI -> the client sessions subscribed (resread.go)
	upSess                           *mcp.ClientSession                     // the upstream session upSubs belong to
	upSubs                           map[string]bool                        // the URIs it is subscribed to
}

func newLink(g *Gateway, u *Upstream) *link {
	l := &link{u: u, g: g, down: "not started"}
	l.grace.forget = l.forget
	opts := &mcp.ClientOptions{
		// No roots; sampling and elicitation only as the policy allows
		// (relay.go).
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: l.onProgress,
		LoggingMessageHandler:       l.onLog,
		ToolListChangedHandler:      l.onListChanged,
		PromptListChangedHandler:    l.onPromptsChanged,
		ResourceListChangedHandler:  l.onResourcesChanged,
		ResourceUpdatedHandler:      l.onResourceUpdated,
	}
	l.relayHandlers(opts)
	l.client = mcp.NewClient(&mcp.Implementation{Name: "bulwark-gateway", Version: "v1"}, opts)
	l.client.AddReceivingMiddleware(l.watchAsks)
	return l
}

// connect starts (or reaches) the upstream, initializes a session and
// lists its tools.
func (l *link) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var t mcp.Transport
	var p *process
	var rec *rawLists
	var st *stdioTransport
	if l.u.Command != "" {
		var err error
		if p, st, err = spawn(l.u, l.g.getenv, l.g.logger, l.g.scrub); err != nil {
			return err
		}
		if !l.g.sdkCalls && !l.u.relays() {
			st.notify = l.rawNote // progress and logs in order with the raw results (stdioconn.go)
		}
		t = st
		rec = &rawLists{}
		t = rawTransport{Transport: t, rec: rec}
	} else {
		rec = &rawLists{}
		t = &mcp.StreamableClientTransport{Endpoint: l.u.URL, HTTPClient: recordLists(l.g.httpClient(l.u), rec, httpBodyLimit(l.u)), MaxRetries: -1, DisableStandaloneSSE: true}
	}
	sess, err := l.client.Connect(ctx, t, nil)
	if err != nil {
		if p != nil {
			p.kill()
		}
		return fmt.Errorf("initializing: %w", err)
	}
	l.listMu.Lock()
	defer l.listMu.Unlock()
	defs, order, err := listTools(ctx, sess, rec)
	if err != nil {
		_ = sess.Close()
		if p != nil {
			p.kill()
		}
		return err
	}
	l.g.checkPins(ctx, l, defs, order)
	l.recheckUnchecked(sess, defs)
	// Ask for log messages (relayed sanitized); a server without logging
	// refuses, which changes nothing.
	err = sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"})
	l.g.logger.Debug("upstream logging level", "upstream", l.u.Name, "error", err)
	var conn *stdioConn
	if st != nil && !l.g.sdkCalls {
		conn = st.conn
	}
	var hconn *httpConn
	if l.u.URL != "" {
		hconn = &httpConn{hc: l.g.httpClient(l.u), url: l.u.URL, session: sess.ID(), max: httpBodyLimit(l.u)}
		if ir := sess.InitializeResult(); ir != nil {
			hconn.version = ir.ProtocolVersion
		}
	}
	l.mu.Lock()
	old := l.defs
	l.sess, l.conn, l.hconn, l.proc, l.defs, l.down, l.rec = sess, conn, hconn, p, defs, "", rec
	l.mu.Unlock()
	if err := l.g.publish(l, old, defs); err != nil {
		l.g.logger.Warn("upstream tools could not be updated", "upstream", l.u.Name, "error", err.Error())
	}
	l.g.refreshPrompts(ctx, l, sess)   // prompts.go
	l.g.refreshResources(ctx, l, sess) // resources.go
	return nil
}

// supervise waits for the session to end and starts a new one, with
// backoff, until ctx ends. It owns the child: a session that ends for any
// reason has its child killed.
func (l *link) supervise(ctx context.Context) {
	backoff := backoffMin
	for {
		l.mu.Lock()
		sess, proc := l.sess, l.proc
		l.mu.Unlock()
		started := time.Now()
		if sess != nil {
			err := sess.Wait()
			if ctx.Err() != nil { // Close: the gateway is stopping
				return
			}
			l.ended(proc, err)
		}
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > healthyAfter {
			backoff = backoffMin
		}
		if !waitCtx(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, backoffMax)
		if err := l.connect(ctx); err != nil {
			l.setDown(err)
			l.g.logger.Warn("upstream restart failed", "upstream", l.u.Name, "error", l.g.scrub.text(err.Error()), "retry_in", backoff)
			continue
		}
		l.mu.Lock()
		l.restarts++
		n := l.restarts
		l.mu.Unlock()
		l.g.logger.Info("upstream restarted", "upstream", l.u.Name, "restarts", n)
	}
}

// ended records a session's end and kills its child.
func (l *link) ended(p *process, err error) {
	if p != nil {
		p.kill()
	}
	why := "its session closed"
	if p != nil {
		select {
		case <-p.done:
			if p.err != nil {
				why = "it exited (" + p.err.Error() + ")"
			}
		default: // not reaped yet: its status is not known
		}
	}
	l.mu.Lock()
	l.sess, l.conn, l.hconn, l.proc, l.down = nil, nil, nil, nil, why
	l.mu.Unlock()
	msg := "upstream session ended; restarting"
	if err != nil {
		l.g.logger.Warn(msg, "upstream", l.u.Name, "reason", why, "error", l.g.scrub.text(err.Error()))
		return
	}
	l.g.logger.Warn(msg, "upstream", l.u.Name, "reason", why)
}

func (l *link) setDown(err error) {
	l.mu.Lock()
	l.down = l.g.scrub.text(err.Error())
	l.mu.Unlock()
}

// close ends the session and kills the child.
func (l *link) close() {
	l.flights.cancelAll()
	l.mu.Lock()
	sess, p := l.sess, l.proc
	l.mu.Unlock()
	if sess != nil {
		_ = sess.Close()
	}
	if p != nil {
		p.kill()
	}
}

// rawConn is the connection a relayed call to sess goes on, or nil (a URL
// upstream: the go-sdk session).
func (l *link) rawConn(sess *mcp.ClientSession) *stdioConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess != sess {
		return nil
	}
	return l.conn
}

// taskConn is what task requests about sess go on (tasks.go): a stdio
// child's connection, a URL upstream's session (httptask.go), or nil (the
// session ended, or is the go-sdk's alone).
func (l *link) taskConn(sess *mcp.ClientSession) taskConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess != sess {
		return nil
	}
	return l.taskConnLocked()
}

// taskConnLocked is the current session's taskConn (l.mu held).
func (l *link) taskConnLocked() taskConn {
	switch {
	case l.conn != nil:
		return l.conn
	case l.hconn != nil:
		return l.hconn
	}
	return nil
}

// current returns the session and the tool's latest definition.
func (l *link) current(name string) (*mcp.ClientSession, def, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess == nil {
		return nil, def{}, &kernel.Error{Code: kernel.UpstreamUnavailable,
			Message: fmt.Sprintf("The upstream %q is not running (%s); the gateway is restarting it.", l.u.Name, l.down),
			Hint:    "Try again in a few seconds; if it keeps failing, the operator should read the gateway's log."}
	}
	d, ok := l.defs[name]
	if !ok {
		return nil, def{}, &kernel.Error{Code: kernel.UpstreamUnavailable,
			Message: fmt.Sprintf("The upstream %q no longer offers the tool %q.", l.u.Name, name)}
	}
	return l.sess, d, nil
}

// waitCtx waits for ch or ctx.
func waitCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
