package gateway

// Relaying an upstream's questions to the client. An upstream whose
// configuration sets relay_elicitation (relay_sampling) is offered the
// elicitation (sampling) capability; any other is offered neither, and its
// requests fail as before.
//
// A question the upstream asks during a call becomes the relayed tool's
// kernel.AskInput: on 2026-07-28 the client gets an input_required result
// and retries with the answer; on a 2025-11-25 session the go-sdk asks it
// with a real request and re-invokes the tool. Either way the upstream call
// is held open ("parked") meanwhile, in this process's memory, under a
// random id carried in the sealed requestState (so only the same principal,
// tool and arguments can resume it), for at most relayWait; a retry that
// does not come in time cancels the upstream call. A retry that reaches
// another gateway process is forwarded here when the replicas share the
// parked calls (replicas.go), and refused otherwise, since the call lives
// here.
//
// An upstream request is not tied to a call on the wire, so it is relayed
// only while exactly one call to that upstream is in flight (as log
// messages are); otherwise, and when the client did not declare the
// capability, the upstream gets a decline (elicitation) or an error
// (sampling) at once, never a hang. What is relayed is rebuilt, bounded and
// cleaned (kernel/untrusted), and its text starts with a mark naming the
// upstream, so a hostile upstream cannot pose as the gateway's own
// confirmation dialog (relayclean.go). The parked calls' state is in
// parked.go.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Relay limits.
const (
	// DefaultRelayWait is how long a parked upstream call waits for the
	// client's answer.
	DefaultRelayWait = 2 * time.Minute
	// MaxParked bounds the upstream calls parked at once, per gateway; an
	// upstream that asks beyond it gets a decline.
	MaxParked = 64

	maxAskMessage     = 2048    // bytes of an elicitation message
	maxAskSchema      = 8 << 10 // bytes of a requested schema, as JSON
	maxAskFields      = 16
	maxSampleMessages = 16
	maxSampleText     = 16 << 10 // bytes of a sampling request's text
	// MaxSampleTokens caps a relayed sampling request's maxTokens.
	MaxSampleTokens = 4096
)

func (u *Upstream) relays() bool { return u.RelayElicitation || u.RelaySampling }

// relayHandlers sets the handlers, and so the capabilities, the upstream's
// policy allows.
func (l *link) relayHandlers(o *mcp.ClientOptions) {
	if l.u.RelayElicitation {
		o.ElicitationHandler = l.onElicit
	}
	if l.u.RelaySampling {
		o.CreateMessageHandler = l.onSample
	}
}

// question is one upstream request relayed to the client.
type question struct {
	id     string
	req    mcp.InputRequest       // rebuilt and cleaned
	answer chan mcp.InputResponse // capacity 1; nil: no answer
}

// flight is one upstream call of a relaying upstream: it may outlive the
// tool invocation that started it, while parked.
type flight struct {
	l      *link
	mayAsk func(mcp.InputRequest) bool // the client's declared capabilities
	ctx    context.Context
	cancel context.CancelFunc
	tok    string // the upstream call's progress token
	key    tokKey // tok's key in the link's calls
	asks   chan *question
	done   chan flightEnd // capacity 1
	q      *question      // the open question, while parked
	timer  *time.Timer    // cancels the call when the retry does not come
}

type flightEnd struct {
	res     *mcp.CallToolResult
	err     error
	expired bool // the flight's own deadline or cancellation ended it
}

// callToolSDK is callTool through the go-sdk's client session: a resumed
// relayed call, an upstream that relays questions, a URL upstream.
func (g *Gateway) callToolSDK(ctx context.Context, l *link, call *kernel.Call, sess *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if st := call.State(); st != nil {
		return g.resume(ctx, l, call, string(st))
	}
	if !l.u.relays() {
		res, err := sess.CallTool(ctx, params)
		return res, g.notRelayed(l, err)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.u.callTimeout(g.cfg.CallTimeout)+g.parked.relayWait())
	key := tokKey{n: l.nextTok.Add(1), relay: true}
	f := &flight{l: l, mayAsk: call.MayAsk, ctx: fctx, cancel: cancel, asks: make(chan *question), done: make(chan flightEnd, 1),
		tok: key.String(), key: key}
	if params.GetProgressToken() != nil { // only when the client asked for progress
		params.SetProgressToken(f.tok)
	}
	l.calls.store(f.key, call)
	l.flights.add(f)
	go func() {
		res, err := sess.CallTool(fctx, params)
		expired := fctx.Err() != nil
		l.flights.remove(f)
		cancel()
		l.grace.after(notifyGrace, graceEnd{key: f.key})
		f.done <- flightEnd{res, err, expired}
	}()
	return g.await(ctx, call, f)
}

// await waits for the flight's result or its next question, which parks it.
func (g *Gateway) await(ctx context.Context, call *kernel.Call, f *flight) (*mcp.CallToolResult, error) {
	for {
		select {
		case end := <-f.done:
			if end.err != nil && ctx.Err() == nil && end.expired {
				return nil, &kernel.Error{Code: kernel.Timeout, Cause: end.err,
					Message: fmt.Sprintf("The upstream %q did not finish the call in time; it was cancelled.", f.l.u.Name)}
			}
			return end.res, g.notRelayed(f.l, end.err)
		case q := <-f.asks:
			id, err := parkID()
			if err != nil {
				q.answer <- nil
				continue
			}
			f.q = q
			f.timer = time.AfterFunc(g.parked.relayWait(), func() {
				if g.parked.take(id) == f {
					g.logger.Info("relayed question not answered in time; upstream call cancelled", "upstream", f.l.u.Name)
					f.cancel()
					g.forgetParked(id)
				}
			})
			if !g.parked.put(id, f) {
				f.timer.Stop()
				g.logger.Warn("relayed question declined: too many parked calls", "upstream", f.l.u.Name, "max", MaxParked)
				q.answer <- nil
				continue
			}
			// Recorded for the other replicas before the client can answer
			// (replicas.go); a store that fails fails the call closed.
			if err := g.recordParked(ctx, id, g.parked.relayWait()); err != nil {
				if g.parked.take(id) == f {
					f.timer.Stop()
				}
				f.cancel()
				return nil, call.StoreUnavailable(fmt.Errorf("recording a parked call: %w", err))
			}
			g.logger.Info("upstream question relayed to the client", "upstream", f.l.u.Name, "kind", fmt.Sprintf("%T", q.req))
			return nil, kernel.AskInput(mcp.InputRequestMap{q.id: q.req}, []byte(id))
		case <-ctx.Done():
			f.cancel()
			return nil, ctx.Err()
		}
	}
}

// resume answers a parked flight's question with the client's response and
// waits again.
func (g *Gateway) resume(ctx context.Context, l *link, call *kernel.Call, id string) (*mcp.CallToolResult, error) {
	f := g.parked.take(id)
	if f == nil || f.l != l {
		if f != nil {
			f.cancel()
			g.forgetParked(id)
		}
		return nil, &kernel.Error{Code: kernel.FailedPrecondition,
			Message: fmt.Sprintf("The question the upstream %q asked during this call is no longer open: it was not answered within %s "+
				"(the upstream call was cancelled), the gateway process that asked has stopped, or the answer reached another "+
				"gateway process that could not tell where it was asked (replicas without --advertise-url).", l.u.Name, g.parked.relayWait()),
			Hint: "Call the tool again, without requestState."}
	}
	f.timer.Stop()
	g.forgetParked(id)
	l.calls.store(f.key, call)
	f.q.answer <- call.InputResponses()[f.q.id]
	return g.await(ctx, call, f)
}

// notRelayed turns the error of a call whose upstream asked for something
// the gateway did not relay (on 2026-07-28 a refused input request fails
// the whole call) into a tool error that says so; a JSON-RPC error is the
// upstream's answer, not a broken connection.
func (g *Gateway) notRelayed(l *link, err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return err
	}
	msg := fmt.Sprintf("The upstream %q answered the call with an error.", l.u.Name)
	if strings.Contains(err.Error(), "input request") {
		msg = fmt.Sprintf("The upstream %q asked the client for input (elicitation, sampling or roots) that the gateway did not relay, so the call did not complete.", l.u.Name)
	}
	return &kernel.Error{Code: kernel.UpstreamError, Upstream: g.scrub.text(je.Message), Message: msg,
		Hint: "The gateway's configuration decides what an upstream may ask (relay_elicitation, relay_sampling)."}
}

func parkID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// ask relays q through the flight's tool invocation and waits for the
// answer, or for the call's end.
func (f *flight) ask(ctx context.Context, q *question) (mcp.InputResponse, error) {
	q.answer = make(chan mcp.InputResponse, 1)
	select {
	case f.asks <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-f.ctx.Done():
		return nil, errors.New("the call ended")
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-f.ctx.Done():
		return nil, errors.New("the call ended before the client answered")
	}
}

// refused is what an upstream gets for a request the gateway will not relay.
func refused(format string, a ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bulwark gateway: " + fmt.Sprintf(format, a...)}
}

// onElicit relays an upstream's elicitation/create.
func (l *link) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	decline := &mcp.ElicitResult{Action: "decline"}
	f := l.flights.only()
	if f == nil {
		l.g.logger.Info("upstream elicitation declined: not exactly one call in flight", "upstream", l.u.Name)
		return decline, nil
	}
	p, err := cleanElicit(l.u.Name, req.Params)
	if err == nil {
		err = l.g.holdsSecret(p)
	}
	if err != nil {
		l.g.logger.Info("upstream elicitation refused", "upstream", l.u.Name, "reason", err.Error())
		return nil, refused("%v", err)
	}
	if !f.mayAsk(p) {
		return decline, nil
	}
	a, err := f.ask(ctx, &question{id: "upstream_" + l.u.Name, req: p})
	if err != nil {
		return nil, err
	}
	r, ok := a.(*mcp.ElicitResult)
	if !ok || r == nil {
		return decline, nil
	}
	return &mcp.ElicitResult{Action: r.Action, Content: r.Content}, nil
}

// onSample relays an upstream's sampling/createMessage.
func (l *link) onSample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	f := l.flights.only()
	if f == nil {
		return nil, refused("sampling is relayed only while exactly one call to this server is in flight")
	}
	p, err := cleanSample(l.u.Name, req.Params)
	if err == nil {
		err = l.g.holdsSecret(p)
	}
	if err != nil {
		l.g.logger.Info("upstream sampling refused", "upstream", l.u.Name, "reason", err.Error())
		return nil, refused("%v", err)
	}
	if !f.mayAsk(p) {
		return nil, refused("the client did not declare sampling")
	}
	a, err := f.ask(ctx, &question{id: "upstream_" + l.u.Name, req: p})
	if err != nil {
		return nil, err
	}
	r, ok := a.(*mcp.CreateMessageWithToolsResult)
	if !ok || r == nil || len(r.Content) == 0 {
		return nil, refused("the client gave no sampling result")
	}
	return &mcp.CreateMessageResult{Content: r.Content[0], Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
}
