package kernel

// Answers that belong to another replica. A handler that holds something
// in its process while the client answers its question (the gateway's
// parked upstream call: servers/gateway/relay.go) cannot resume it on
// another replica; with a StateRouter, the replica an answer reaches over
// HTTP forwards it to the one that asked. The same holds for a task that
// runs in one replica's process (the gateway's: servers/gateway/tasks.go):
// with a StateRouter that is also a TaskRouter, tasks/get, tasks/result
// and tasks/cancel go to the replica that holds the task, by the same
// forwarding.
//
// The route is decided after the guards and authentication, before
// admission (the rate limit counts the call once, where it runs), and only
// for a tools/call whose requestState opens for its caller and its tool
// under this server's sealer (not spent: the replica that runs it spends
// it, so an answer runs at most once however often it is forwarded). A
// state that does not open costs nothing more: no store lookup, no dial.
// The forwarded request is the client's own — its body and its headers,
// credentials included (as sent: keepSent) — so the replica that receives it authenticates,
// admits, verifies and spends it as if the client had sent it there: there
// is no trust between replicas beyond the sealer key they already share.
// It is marked with ForwardedHeader, and a marked request is never routed
// again (a client that sends the mark only turns forwarding off for its
// own request). Where it goes is the router's decision; the kernel sends it
// through kernel/upstream's client (no redirects, bounded bodies, a
// deadline) and relays the answer, which passes this replica's egress gate
// too.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// ForwardedHeader marks a request one replica forwarded to another
// (StateRouter); such a request is never routed again.
const ForwardedHeader = "Bulwark-Forwarded"

// StateRouter finds the replica that holds what a requestState answers.
type StateRouter interface {
	// RouteState is asked, over HTTP, about a tools/call of tool whose
	// requestState opened for its caller; state is what the handler gave
	// AskInput. It returns where to forward the request, a zero Route to
	// run it here, or an error when the shared store that decides it
	// failed (the call is refused with store_unavailable).
	RouteState(ctx context.Context, tool string, state []byte) (Route, error)
}

// TaskRouter finds the replica that holds a task. A StateRouter that also
// implements it has, over HTTP, the tasks/get, tasks/result and
// tasks/cancel of a 2025-11-25 client routed as answers are: decided after
// the guards and authentication, before admission (the replica that serves
// the request spends the rate limit and writes the audit record), the
// client's own request forwarded with its credentials and the mark, never
// routed twice. tasks/list is not routed: a TaskRelay lists the tasks of
// every replica itself (the gateway reads what each holder last saw from
// the shared store).
type TaskRouter interface {
	// RouteTask is asked about a task request of p naming the task id; it
	// returns where to forward the request, a zero Route to answer it here
	// (a task this replica holds, or one no replica holds for p: the
	// answer is then the unknown id's), or an error when the shared store
	// that decides it failed (the request is refused with
	// store_unavailable).
	RouteTask(ctx context.Context, p identity.Principal, id string) (Route, error)
}

// Route is where a StateRouter sends a request.
type Route struct {
	// URL is the MCP endpoint of the replica that holds the call; nil: here.
	URL *url.URL
	// Timeout bounds the forwarded request, answer included.
	Timeout time.Duration
}

// CodeReplicaUnreachable is the audit's error code (and the JSON-RPC
// error's data) of an answer whose replica could not be reached.
const CodeReplicaUnreachable Code = "replica_unreachable"

// audit.Record.Attrs key naming the replica an answer was forwarded to.
const attrForwardedTo = "forwarded_to"

// maxForwardedReply caps the body of a forwarded request's answer.
const maxForwardedReply = 32 << 20

// newPeerClient is the client answers are forwarded with: never retried (a
// forwarded call may have run), no redirects, bounded bodies, never through
// a proxy (the client's credentials go to the replica alone); the route's
// Timeout is its deadline.
func newPeerClient() *upstream.Client {
	return upstream.New(&upstream.Options{Timeout: 24 * time.Hour, MaxBodyBytes: maxForwardedReply,
		Retry: upstream.RetryPolicy{MaxAttempts: 1}, UserAgent: "bulwark-replica", NoProxy: true})
}

// routeState forwards a tools/call whose answer belongs to another replica
// (StateRouter), and a task request whose task another replica holds
// (TaskRouter); every other request goes on to next.
func (s *Server) routeState(next http.Handler) http.Handler {
	tasks, _ := s.opts.StateRouter.(TaskRouter)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env, err := httpguard.RequestMessage(r)
		if err != nil || r.Method != http.MethodPost || r.Header.Get(ForwardedHeader) != "" {
			next.ServeHTTP(w, r)
			return
		}
		// A requestState is a params member the guards' parser does not
		// name: OtherParams. Every other request passes untouched.
		routed := env.Method == "tools/call" && env.OtherParams
		task := tasks != nil && routedTaskMethod(env.Method) && s.taskRequestHTTP(env, r)
		if !routed && !task {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		p, ok := identity.FromContext(ctx)
		if !ok {
			p = identity.Local("")
		}
		var route Route
		tool := env.Name
		if task {
			tr, ok, perr := parseTaskRequest(env.Method, body)
			if !ok || perr != nil || tr.taskID == "" {
				next.ServeHTTP(w, r) // answered here: the malformed request's error, the unknown id's
				return
			}
			tool = env.Method // as the task request's own audit record names it
			route, err = tasks.RouteTask(ctx, p, tr.taskID)
		} else {
			state, ok := s.peekState(body, p.ID, env.Name)
			if !ok {
				next.ServeHTTP(w, r) // the tool layer refuses it, as on every replica
				return
			}
			route, err = s.opts.StateRouter.RouteState(ctx, env.Name, state)
		}
		rec := audit.Record{Time: s.opts.Now(), Principal: p.ID, Plan: p.Plan, Scheme: p.Scheme,
			Network: clientNetwork(r.RemoteAddr), Tool: tool}
		switch {
		case err != nil:
			s.outage.report(ctx, s.logger, err)
			rec.Outcome, rec.ErrorCode = audit.Refused, string(StoreUnavailable)
			s.audit.Write(ctx, rec)
			e := ratelimit.Unavailable("")
			httpguard.WriteError(w, http.StatusServiceUnavailable, env.ID, int(e.Code), e.Message, e.Data)
			return
		case route.URL == nil:
			next.ServeHTTP(w, r)
			return
		}
		s.outage.recovered(ctx, s.logger)
		s.forward(w, r, body, env, route, rec, task)
	})
}

// routedTaskMethod reports whether a task request names a task another
// replica may hold (TaskRouter).
func routedTaskMethod(method string) bool {
	switch method {
	case "tasks/get", "tasks/result", "tasks/cancel":
		return true
	}
	return false
}

// peekState opens the requestState in body for principal and tool without
// spending it, and returns the handler's State; ok is false for anything
// the tool layer would refuse on sight (or that has no State).
func (s *Server) peekState(body []byte, principal, tool string) ([]byte, bool) {
	var m struct {
		Params struct {
			RequestState string `json:"requestState"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Params.RequestState == "" {
		return nil, false
	}
	raw, err := s.sealer.OpenFor(purposeRequestState, principal, m.Params.RequestState)
	if err != nil {
		return nil, false
	}
	var st requestState
	if json.Unmarshal(raw, &st) != nil || st.Kind != stateTool || st.Tool != tool || len(st.Data) == 0 {
		return nil, false
	}
	return st.Data, true
}

// notForwarded are the request headers a forwarded request does not carry:
// the connection's own, and what the client's transport sets anew.
var notForwarded = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authorization": true, "Proxy-Connection": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Content-Length": true,
	"Accept-Encoding": true, "Cookie": true, "Traceparent": true, "Tracestate": true, ForwardedHeader: true,
}

// sentKey is the context key of the request's headers as the client sent
// them, credentials included (kernel/identity removes those from the
// request it passes on). Only forward reads it: the one stage that sends
// the client's credentials anywhere, and only to the replica a StateRouter
// names — the same service, which the credentials were sent to already.
type sentKey struct{}

// keepSent keeps the request's headers as sent, for forward.
func keepSent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sentKey{}, r.Header)))
	})
}

// forward sends the client's request to the route's replica and relays its
// answer; rec is the audit record of this replica's part.
// task is true for a task request (TaskRouter), false for an answer.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte, env httpguard.Message, route Route, rec audit.Record, task bool) {
	ctx := r.Context()
	start := time.Now()
	sent, _ := ctx.Value(sentKey{}).(http.Header)
	h := http.Header{}
	for k, v := range sent {
		if !notForwarded[http.CanonicalHeaderKey(k)] {
			h[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		}
	}
	h.Set(ForwardedHeader, "1")
	timeout := route.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if tc, ok := httpguard.TraceFromContext(ctx); ok {
		fctx = upstream.WithTrace(fctx, tc.Traceparent, tc.Tracestate)
	}
	resp, err := s.peers.Do(fctx, &upstream.Request{Method: http.MethodPost, URL: route.URL, Header: h, Body: body})
	rec.Duration = time.Since(start)
	rec.BytesIn = int64(len(body))
	rec.Attrs = map[string]string{attrForwardedTo: route.URL.Host}
	if err != nil {
		what, hint, msg := "answer", "Call the tool again, without requestState.",
			"The gateway replica that asked this question could not be reached (it may have stopped), so the answer was not delivered; call the tool again without requestState."
		if task {
			what, hint, msg = "task request", "Ask again in a few seconds; if the replica stopped, its tasks ended with it: call the tool again.",
				"The replica that holds this task could not be reached (it may have stopped, and its tasks with it), so the request was not delivered."
		}
		s.logger.WarnContext(ctx, what+" not forwarded: the replica holding its call did not answer", "replica", route.URL.Host, "error", err.Error())
		rec.Outcome, rec.ErrorCode = audit.Internal, string(CodeReplicaUnreachable)
		s.audit.Write(ctx, rec)
		data, _ := json.Marshal(map[string]string{"error": string(CodeReplicaUnreachable), "hint": hint})
		httpguard.WriteError(w, http.StatusBadGateway, env.ID, int(jsonrpc.CodeInternalError), msg, json.RawMessage(data))
		return
	}
	rec.Outcome, rec.BytesOut = audit.Forwarded, int64(len(resp.Body))
	s.audit.Write(ctx, rec)
	for _, k := range []string{"Content-Type", "Retry-After", "Cache-Control"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(resp.StatusCode)
	w.Write(resp.Body)
}
