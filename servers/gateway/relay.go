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
// does not come in time cancels the upstream call, and a retry that reaches
// another gateway process is refused, since the call lives here.
//
// An upstream request is not tied to a call on the wire, so it is relayed
// only while exactly one call to that upstream is in flight (as log
// messages are); otherwise, and when the client did not declare the
// capability, the upstream gets a decline (elicitation) or an error
// (sampling) at once, never a hang. What is relayed is rebuilt, bounded and
// cleaned (kernel/untrusted), and its text starts with a mark naming the
// upstream, so a hostile upstream cannot pose as the gateway's own
// confirmation dialog.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
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

// flights are a link's upstream calls in flight.
type flights struct {
	mu sync.Mutex
	m  map[*flight]struct{}
}

func (s *flights) add(f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[*flight]struct{}{}
	}
	s.m[f] = struct{}{}
}

func (s *flights) remove(f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, f)
}

// only is the one flight, or nil when there are none or several.
// cancelAll ends every upstream call in flight, parked ones included: a
// gateway that closes does not wait for answers that will not come.
func (s *flights) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f := range s.m {
		f.cancel()
	}
}

func (s *flights) only() *flight {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) != 1 {
		return nil
	}
	for f := range s.m {
		return f
	}
	return nil
}

// parking holds the parked flights by id.
type parking struct {
	mu   sync.Mutex
	m    map[string]*flight
	wait time.Duration // DefaultRelayWait when zero
}

func (p *parking) put(id string, f *flight) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= MaxParked {
		return false
	}
	if p.m == nil {
		p.m = map[string]*flight{}
	}
	p.m[id] = f
	return true
}

func (p *parking) take(id string) *flight {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.m[id]
	delete(p.m, id)
	return f
}

func (p *parking) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

func (p *parking) relayWait() time.Duration {
	if p.wait > 0 {
		return p.wait
	}
	return DefaultRelayWait
}

// passes reports whether a callTool error is already the tool's answer.
func passes(err error) bool {
	var ir *kernel.InputRequired
	var ke *kernel.Error
	return errors.As(err, &ir) || errors.As(err, &ke)
}

// callTool makes the upstream call: directly, or for a relaying upstream as
// a flight that may park; a retry that carries the state of a parked flight
// answers its question and resumes it.
func (g *Gateway) callTool(ctx context.Context, l *link, call *kernel.Call, sess *mcp.ClientSession, rp *relayParams, timeout time.Duration) (*mcp.CallToolResult, error) {
	if c := l.rawConn(sess); c != nil && !l.u.relays() && call.State() == nil {
		p := rp.params()
		res, err := rawCallTool(ctx, c, &p, timeout) // its own timer, no context
		return res, g.notRelayed(l, err)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p := rp.params()
	res, err := g.callToolSDK(cctx, l, call, sess, &p)
	if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		err = timedOut{err}
	}
	return res, err
}

// timedOut is an error that came once the call's time limit passed: it is
// errCallTimeout, and still what it was (a relayed question's refusal
// stays one).
type timedOut struct{ err error }

func (e timedOut) Error() string        { return e.err.Error() }
func (e timedOut) Unwrap() error        { return e.err }
func (e timedOut) Is(target error) bool { return target == errCallTimeout }

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
	return g.await(ctx, f)
}

// await waits for the flight's result or its next question, which parks it.
func (g *Gateway) await(ctx context.Context, f *flight) (*mcp.CallToolResult, error) {
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
				}
			})
			if !g.parked.put(id, f) {
				f.timer.Stop()
				g.logger.Warn("relayed question declined: too many parked calls", "upstream", f.l.u.Name, "max", MaxParked)
				q.answer <- nil
				continue
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
		}
		return nil, &kernel.Error{Code: kernel.FailedPrecondition,
			Message: fmt.Sprintf("The question the upstream %q asked during this call is no longer open: it was not answered within %s "+
				"(the upstream call was cancelled), or the answer reached another gateway process than the one that asked "+
				"(a relayed question lives in the memory of that process).", l.u.Name, g.parked.relayWait()),
			Hint: "Call the tool again, without requestState."}
	}
	f.timer.Stop()
	l.calls.store(f.key, call)
	f.q.answer <- call.InputResponses()[f.q.id]
	return g.await(ctx, f)
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

// mark starts relayed text with its origin; the text is cleaned and made
// one line, so nothing in it can look like the start of another dialog.
func mark(up, s string) string {
	return fmt.Sprintf("[asked by the upstream server %q through the gateway, not by bulwark] %s", up, oneLine(s))
}

func oneLine(s string) string { return strings.Join(strings.Fields(untrusted.CleanString(s)), " ") }

// fieldRE is compiled on first use (lazyRE).
var fieldRE = lazyRE(`^[A-Za-z0-9_.-]{1,64}$`)

// cleanElicit rebuilds a form elicitation within the relay's limits: flat
// primitive fields only (as the specification allows), their texts cleaned.
func cleanElicit(up string, p *mcp.ElicitParams) (*mcp.ElicitParams, error) {
	if p == nil {
		return nil, errors.New("no parameters")
	}
	if p.Mode != "" && p.Mode != "form" {
		return nil, errors.New("only form elicitation is relayed")
	}
	if len(p.Message) > maxAskMessage {
		return nil, fmt.Errorf("the message is over %d bytes", maxAskMessage)
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil || len(raw) > maxAskSchema {
		return nil, fmt.Errorf("the requested schema is unencodable or over %d bytes", maxAskSchema)
	}
	var s struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Type != "object" {
		return nil, errors.New("the requested schema is not a flat object")
	}
	if len(s.Properties) > maxAskFields {
		return nil, fmt.Errorf("the form has %d fields, more than %d", len(s.Properties), maxAskFields)
	}
	props := make(map[string]any, len(s.Properties))
	for name, prop := range s.Properties {
		if !fieldRE().MatchString(name) {
			return nil, fmt.Errorf("field name %.64q is not allowed", name)
		}
		out, err := cleanField(prop)
		if err != nil {
			return nil, fmt.Errorf("field %q: %v", name, err)
		}
		props[name] = out
	}
	schema := map[string]any{"type": "object", "properties": props}
	var req []string
	for _, r := range s.Required {
		if _, ok := props[r]; ok {
			req = append(req, r)
		}
	}
	if len(req) > 0 {
		schema["required"] = req
	}
	return &mcp.ElicitParams{Mode: "form", Message: mark(up, p.Message), RequestedSchema: schema}, nil
}

// cleanField keeps a field of a form the specification allows (string,
// number, integer, boolean; a single-select enum as enum, enumNames or
// oneOf of const and title; a multi-select array of such strings), with
// only its known keywords, texts cleaned.
func cleanField(prop map[string]any) (map[string]any, error) {
	switch prop["type"] {
	case "string", "number", "integer", "boolean", "array":
	default:
		return nil, errors.New("only string, number, integer, boolean and enum-array fields are relayed")
	}
	out := map[string]any{}
	for k, v := range prop {
		var err error
		switch k {
		case "type", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "format", "title", "description":
			out[k], err = cleanScalar(v)
		case "default":
			if xs, ok := v.([]any); ok && prop["type"] == "array" {
				out[k], err = cleanStrings(xs)
			} else {
				out[k], err = cleanScalar(v)
			}
		case "enum", "enumNames":
			xs, _ := v.([]any)
			out[k], err = cleanStrings(xs)
		case "oneOf", "anyOf":
			out[k], err = cleanOptions(v)
		case "items":
			m, ok := v.(map[string]any)
			if !ok || prop["type"] != "array" {
				return nil, errors.New("items only on an array")
			}
			items := map[string]any{}
			for ik, iv := range m {
				switch ik {
				case "type":
					if iv != "string" {
						return nil, errors.New("array items must be strings")
					}
					items[ik] = iv
				case "enum":
					xs, _ := iv.([]any)
					items[ik], err = cleanStrings(xs)
				case "anyOf", "oneOf":
					items[ik], err = cleanOptions(iv)
				}
				if err != nil {
					return nil, err
				}
			}
			if items["enum"] == nil && items["anyOf"] == nil && items["oneOf"] == nil {
				return nil, errors.New("an array field must list its options")
			}
			out[k] = items
		} // any other keyword is dropped
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
	}
	if out["type"] == "array" && out["items"] == nil {
		return nil, errors.New("an array field must list its options")
	}
	return out, nil
}

func cleanScalar(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return oneLine(x), nil
	case float64, bool:
		return x, nil
	}
	return nil, errors.New("not a scalar")
}

func cleanStrings(xs []any) ([]any, error) {
	if xs == nil {
		return nil, errors.New("not a list")
	}
	out := make([]any, 0, len(xs))
	for _, x := range xs {
		s, ok := x.(string)
		if !ok {
			return nil, errors.New("holds a non-string")
		}
		out = append(out, oneLine(s))
	}
	return out, nil
}

// cleanOptions keeps a list of {const, title} options.
func cleanOptions(v any) ([]any, error) {
	xs, ok := v.([]any)
	if !ok {
		return nil, errors.New("not a list")
	}
	out := make([]any, 0, len(xs))
	for _, x := range xs {
		m, ok := x.(map[string]any)
		c, okc := m["const"].(string)
		if !ok || !okc {
			return nil, errors.New("an option needs a string const")
		}
		o := map[string]any{"const": oneLine(c)}
		if t, ok := m["title"].(string); ok {
			o["title"] = oneLine(t)
		}
		out = append(out, o)
	}
	return out, nil
}

// cleanSample rebuilds a sampling request within the relay's limits: text
// messages only, maxTokens capped, no context from other servers.
func cleanSample(up string, p *mcp.CreateMessageParams) (*mcp.CreateMessageParams, error) {
	if p == nil || len(p.Messages) == 0 {
		return nil, errors.New("no messages")
	}
	if len(p.Messages) > maxSampleMessages {
		return nil, fmt.Errorf("%d messages, more than %d", len(p.Messages), maxSampleMessages)
	}
	if p.MaxTokens <= 0 {
		return nil, errors.New("maxTokens must be positive")
	}
	n := len(p.SystemPrompt)
	msgs := make([]*mcp.SamplingMessage, 0, len(p.Messages))
	for _, m := range p.Messages {
		t, ok := m.Content.(*mcp.TextContent)
		if !ok || (m.Role != "user" && m.Role != "assistant") {
			return nil, errors.New("only text messages from user or assistant are relayed")
		}
		n += len(t.Text)
		msgs = append(msgs, &mcp.SamplingMessage{Role: m.Role, Content: &mcp.TextContent{Text: untrusted.CleanString(t.Text)}})
	}
	if n > maxSampleText {
		return nil, fmt.Errorf("the request holds over %d bytes of text", maxSampleText)
	}
	return &mcp.CreateMessageParams{MaxTokens: min(p.MaxTokens, MaxSampleTokens), Messages: msgs, IncludeContext: "none",
		SystemPrompt: mark(up, p.SystemPrompt), Temperature: p.Temperature}, nil
}

// holdsSecret refuses a question that carries a credential the gateway
// knows (its children's secret variables, upstream credentials), in any
// form its scrubber finds. The kernel refuses questions holding the
// credentials it was given; this covers what only the gateway knows.
func (g *Gateway) holdsSecret(p any) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	// the decoded strings, as the egress gate reads them: a secret written
	// with escapes inside the text is found too
	if _, n, err := egress.ScrubJSON(raw, g.scrub.secrets()); err != nil || n > 0 {
		return errors.New("the question held a credential, so it was not relayed")
	}
	return nil
}
