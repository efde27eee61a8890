package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/internal/reqscope"
	"github.com/bulwarkmcp/bulwark/kernel/listen"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// MCPPath is where the MCP endpoint is served.
const MCPPath = "/mcp"

// HTTPOptions configure serving over Streamable HTTP. The zero value serves
// a loopback-only, unauthenticated endpoint with every guard on.
type HTTPOptions struct {
	// Addr is the listen address; a bare port or ":port" binds 127.0.0.1.
	Addr string
	// Guards configures the transport guards (Hosts, CORS, body size,
	// flood). Empty Hosts default to the loopback names of Addr, and empty
	// CORS origins to the server's own loopback origins.
	Guards httpguard.PipelineOptions
	// Auth authenticates requests; identity.None (principal "local") when
	// nil.
	Auth identity.Authenticator
	// OAuth, when Auth is OAuth, also serves its RFC 9728 metadata.
	OAuth *identity.OAuth
	// Env is the deployment environment (BULWARK_ENV); "production" makes
	// a "*" CORS list log a warning.
	Env string
	// DisableFastPath sends every request through the go-sdk's handler.
	// By default the kernel answers stateless tools/call, tools/list,
	// ping and server/discover itself (a call with a progress token or a
	// 2026-07-28 log level as an event stream), with the same answers
	// (fastpath.go). Guards.ContentType.DisableAcceptCheck and
	// Options.DynamicTools also turn it off, whatever this says: `bulwark
	// gateway` over HTTP (a tool set that changes at run time) never takes
	// it. The rules: docs/architecture.md.
	DisableFastPath bool
}

// httpFastPathOn reports whether the HTTP fast path is on: not with
// DisableFastPath, not with DisableAcceptCheck (the go-sdk's Accept rule
// decides), not with DynamicTools (the tool set changes at run time; the
// go-sdk holds the current one). A server rule of the fast paths
// (docs/architecture.md).
func (s *Server) httpFastPathOn(opts HTTPOptions) bool {
	return !opts.DisableFastPath && !opts.Guards.ContentType.DisableAcceptCheck && !s.opts.DynamicTools
}

// HTTPHandler returns the whole HTTP surface: the MCP endpoint behind the
// guards, /healthz, and the protected-resource metadata under OAuth.
func (s *Server) HTTPHandler(opts HTTPOptions) (http.Handler, error) {
	g := opts.Guards
	if g.Logger == nil {
		g.Logger = s.logger
	}
	if len(g.Hosts) == 0 {
		g.Hosts = httpguard.DefaultHosts(opts.Addr)
	}
	if g.CORS == nil {
		g.CORS = &httpguard.CORSOptions{Origins: loopbackOrigins(opts.Addr)}
	} else {
		c := *g.CORS
		g.CORS = &c
	}
	for _, cr := range s.opts.Credentials {
		if s.opts.BYOK && cr.Header != "" {
			// A browser client must be allowed to send its own credentials.
			g.CORS.ExtraHeaders = append(g.CORS.ExtraHeaders, cr.Header)
		}
	}
	// A "*" list in production is logged; it stays the operator's choice.
	g.CORS.WarnIfWildcardInProduction(opts.Env, s.logger)
	auth := opts.Auth
	if auth == nil {
		auth = identity.NewNone(nil)
	}
	g.Auth = identity.Middleware(auth, s.logger)
	pipe, err := httpguard.NewPipeline(&g)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	endpoint := s.sdkHandler()
	if s.httpFastPathOn(opts) {
		endpoint = s.fastPath(endpoint)
	}
	guards, inner := pipe.Handler, s.admission(s.tasksHTTP(endpoint))
	if s.opts.StateRouter != nil { // an answer may belong to another replica (stateroute.go)
		guards = func(next http.Handler) http.Handler { return keepSent(pipe.Handler(next)) }
		inner = s.routeState(inner)
	}
	mux.Handle(MCPPath, s.egressHTTP(s.observeHTTP(guards, inner)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, "ok")
	})
	if opts.OAuth != nil {
		for _, p := range opts.OAuth.MetadataPaths() {
			mux.Handle("GET "+p, opts.OAuth.MetadataHandler())
		}
	}
	return mux, nil
}

// sdkHandler is the go-sdk's stateless handler, answering with plain JSON
// unless the request asked for notifications (a progress token or, in
// 2026-07-28, a log level in _meta): in stateless mode the SDK can deliver
// those only on the request's own event stream, so such a request is
// answered as text/event-stream. Both forms are valid Streamable HTTP.
func (s *Server) sdkHandler() http.Handler {
	newHandler := func(jsonResponse bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
			Stateless:                  true,
			JSONResponse:               jsonResponse,
			DisableLocalhostProtection: true, // the Host and Origin guards above decide, on every interface
			MaxRequestBodyBytes:        -1,   // the body guard above has already bounded the read
			Logger:                     sdkLogger(s.logger),
		})
	}
	plain, stream := newHandler(true), newHandler(false)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if env, err := httpguard.RequestMessage(r); err == nil && env.WantsNotifications {
			stream.ServeHTTP(w, r)
			return
		}
		plain.ServeHTTP(w, r)
	})
}

// admission is pipeline step 10 over HTTP: the tier check, then the rate
// limit, decided once (Server.admit) on the body parsed once by the guards.
// A tier refusal goes on to the tool layer, which answers it as a tool error
// without spending a slot; a limit refusal is answered here, 429 with
// Retry-After, and a store outage 503 — the same JSON-RPC errors stdio
// sends. It also records the client's network and passes the validated
// trace headers on to upstream calls. What it records goes into the
// request's reqscope.Scope (httpScope), the one context value the guards
// created: no copy of the request unless there are trace headers to pass on.
func (s *Server) admission(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, sc := reqscope.Ensure(r)
		hs := &httpScope{network: clientNetwork(r.RemoteAddr)}
		sc.Kernel = hs
		ctx := r.Context()
		if tc, ok := httpguard.TraceFromContext(ctx); ok {
			ctx = upstream.WithTrace(ctx, tc.Traceparent, tc.Tracestate)
			r = r.WithContext(ctx)
		}
		env, err := httpguard.RequestMessage(r)
		if err == nil && env.Method == "tools/call" {
			p, ok := identity.FromContext(ctx)
			if !ok {
				p = identity.Local("")
			}
			a := s.admit(ctx, p, env.Name)
			if a.refusal != nil {
				s.audit.Write(ctx, s.refusalRecord(p, env.Name, hs.network, a))
				writeRefusal(w, env.ID, a)
				return
			}
			hs.admission, hs.admitted = a, true
		}
		next.ServeHTTP(w, r)
	})
}

// clientNetwork reduces an address to its network (/24 for IPv4, /64 for
// IPv6) for the audit: enough to tell clients apart, not to name a host.
func clientNetwork(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	a = a.Unmap()
	if a.Is4() { // netip.Prefix.String's bytes, in one allocation instead of three
		v := a.As4()
		var buf [len("255.255.255.0/24")]byte
		b := strconv.AppendUint(buf[:0], uint64(v[0]), 10)
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(v[1]), 10)
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(v[2]), 10)
		return string(append(b, ".0/24"...))
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// loopbackOrigins are the server's own origins on a loopback address, so a
// page it serves itself (and the conformance suite's rebinding probe) passes.
func loopbackOrigins(addr string) []string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return nil
	}
	return []string{"http://localhost:" + port, "http://127.0.0.1:" + port, "http://[::1]:" + port}
}

// ListenAndServe serves the server over Streamable HTTP on opts.Addr until
// ctx ends, then shuts down gracefully (in-flight calls get up to 10
// seconds). ready, when not nil, receives the bound address once the
// listener is open. (HTTPHandler is the http.Handler, for a server of
// one's own.)
func (s *Server) ListenAndServe(ctx context.Context, opts HTTPOptions, ready func(addr string)) error {
	if os.Getenv("MCPGODEBUG") != "" {
		return errors.New("refusing to start: MCPGODEBUG is set, and its compatibility flags restore weaker go-sdk behaviour")
	}
	addr := listen.Addr(opts.Addr)
	opts.Addr = addr
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	opts.Addr = ln.Addr().String()
	h, err := s.HTTPHandler(opts)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      5 * time.Minute, // long operations report progress and may run for minutes
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if ready != nil {
		ready(opts.Addr)
	}
	return listen.Serve(ctx, srv, ln, 10*time.Second)
}
