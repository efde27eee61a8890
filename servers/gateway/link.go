package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
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
	proc     *process
	rec      *rawLists // the session's raw tools/list results
	defs     map[string]def
	served   map[string]def // the defs Tools() last returned
	down     string         // why there is no session, for the tool error
	restarts int

	calls   callTable  // progress token -> call (calls.go)
	grace   graceQueue // forgets finished calls after notifyGrace
	flights flights    // calls of a relaying upstream (relay.go)
	inCalls atomic.Int64
	nextTok atomic.Uint64

	// set once at Start (features.go)
	withheld, unrelayed []string
	taskTools           []string // tools it runs only as tasks: not exposed (gateway.go)
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
	// Ask for log messages (relayed sanitized); a server without logging
	// refuses, which changes nothing.
	err = sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"})
	l.g.logger.Debug("upstream logging level", "upstream", l.u.Name, "error", err)
	var conn *stdioConn
	if st != nil && !l.g.sdkCalls {
		conn = st.conn
	}
	l.mu.Lock()
	old := l.defs
	l.sess, l.conn, l.proc, l.defs, l.down, l.rec = sess, conn, p, defs, "", rec
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
	l.sess, l.conn, l.proc, l.down = nil, nil, nil, why
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

// onListChanged re-reads the tool list, checks it with the Pinner and
// publishes the changes (relist, pins.go).
func (l *link) onListChanged(ctx context.Context, req *mcp.ToolListChangedRequest) {
	if l.queued.CompareAndSwap(false, true) {
		go l.relist(req.Session)
	}
}

// onProgress relays an upstream's progress to the call it belongs to; the
// kernel cleans the message like any upstream text.
func (l *link) onProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	k, ok := parseTok(tok)
	if !ok {
		return
	}
	c := l.calls.load(k)
	if c == nil {
		return
	}
	c.Progress(ctx, req.Params.Progress, req.Params.Total, req.Params.Message)
}

// rawNote handles, on the read loop of a connection whose calls are relayed
// raw (rawcall.go), the upstream's progress and log notifications — in the
// order they came, before the result that follows them reaches its call,
// which the go-sdk's own dispatch (another goroutine) does not promise: a
// call whose result is written has no stream left for its progress. It
// reports whether it handled msg.
func (l *link) rawNote(msg *jsonrpc.Request) bool {
	switch msg.Method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(msg.Params, &p) != nil {
			return false // the go-sdk's handling, and its error
		}
		l.onProgress(context.Background(), &mcp.ProgressNotificationClientRequest{Params: &p})
		return true
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if json.Unmarshal(msg.Params, &p) != nil {
			return false
		}
		l.onLog(context.Background(), &mcp.LoggingMessageRequest{Params: &p})
		return true
	}
	return false
}

// onLog relays an upstream's log message to the one call in flight, when
// there is exactly one (a log line is not tied to a call, and must not reach
// another principal's client); otherwise it goes to the gateway's log only.
// Either way it is sanitized like a result.
func (l *link) onLog(ctx context.Context, req *mcp.LoggingMessageRequest) {
	var only *kernel.Call
	if l.inCalls.Load() == 1 {
		only = l.calls.any()
	}
	level := slog.LevelInfo
	switch req.Params.Level {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	msg := "upstream " + l.u.Name + " logged"
	if only != nil {
		only.Log(ctx, level, msg, req.Params.Data)
		return
	}
	raw, _ := json.Marshal(req.Params.Data)
	l.g.logger.Log(ctx, level, msg, "upstream", l.u.Name, "data", l.g.scrub.text(string(l.g.cleanJSON(raw))))
}

// httpBodyLimit is the largest response body a URL upstream's client reads.
func httpBodyLimit(u *Upstream) int { return 2*u.maxResult() + 64<<10 }

// httpClient is the hardened client for a URL upstream: kernel/upstream's
// transport (no redirects, capped bodies) with the configured credential
// added to every request — and nothing of the gateway's own clients.
func (g *Gateway) httpClient(u *Upstream) *http.Client {
	hc := upstream.New(&upstream.Options{MaxBodyBytes: int64(httpBodyLimit(u)), UserAgent: "bulwark-gateway"}).HTTPClient()
	if cred := g.creds[u.Name]; cred != "" {
		header := u.CredentialHeader
		if header == "" {
			header = "Authorization"
		}
		if strings.EqualFold(header, "Authorization") && !strings.Contains(cred, " ") {
			cred = "Bearer " + cred
		}
		hc.Transport = withHeader{rt: hc.Transport, name: header, value: cred}
	}
	return hc
}

type withHeader struct {
	rt          http.RoundTripper
	name, value string
}

func (w withHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(w.name, w.value)
	return w.rt.RoundTrip(req)
}

// readCredential reads an upstream's credential file.
func readCredential(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("cannot read credential_file %s: %v", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}
