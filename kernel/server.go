package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/internal/argcheck"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Info names the server to clients.
type Info struct {
	Name    string // e.g. "bulwark-dns"
	Title   string
	Version string
	// Instructions are sent to the client at initialization.
	Instructions string
}

// Options configure a Server. The zero value is usable: no audit, memory
// confirmation store, default limits, the default envelope.
type Options struct {
	// ReadOnly registers only the tools whose policy says ReadOnly: Yes.
	// The others do not exist: tools/list never shows them and a call is an
	// unknown tool.
	ReadOnly bool
	// Allow and Deny filter the tools by exact name or "prefix*", case
	// insensitive: Allow (when set) decides which exist, Deny removes from
	// that. An entry that matches no declared tool is an error.
	Allow, Deny []string
	// Envelope marks upstream data in results (source name, note, limits).
	Envelope untrusted.Envelope
	// Confirm issues confirmation tokens; a memory-backed issuer when nil.
	// Its store also spends requestState handles once (mrtr.go).
	Confirm *confirm.Issuer
	// ConfirmBy chooses how gated calls are confirmed: ConfirmAuto (the
	// zero value: elicitation where the client declares it, else a token),
	// ConfirmElicit or ConfirmToken.
	ConfirmBy ConfirmPath
	// Sealer seals requestState handles (multi-round-trip requests); a
	// random key of this process when nil. Replicas sharing a confirmation
	// store must share a Sealer's master key too.
	Sealer *seal.Sealer
	// Audit receives one record per tools/call; audit.Discard when nil.
	Audit audit.Sink
	// Logger gets the detail of internal errors (under the id the client
	// sees) and tool log lines; slog.DiscardHandler when nil.
	Logger *slog.Logger
	// Tiers orders the plans that tool tiers name; nil allows only Open tools.
	Tiers *ratelimit.Tiers
	// Limiter limits calls per principal; nil means no limit.
	Limiter *ratelimit.Limiter
	// StoreOutage decides what happens while the Limiter's shared store
	// cannot be reached; the zero value refuses every call (fail closed).
	StoreOutage StoreOutage
	// Credentials are the provider credentials handlers may ask for.
	Credentials []Credential
	// Secrets are values the server holds beside its Credentials — an
	// operator's AI key, the values a relay passes to its upstreams — that
	// no client may receive: the egress gate removes them from every
	// message (egress.go). Each must pass egress.CheckSecret. New keeps
	// them only in the gate.
	Secrets []string
	// BYOK takes credentials from each HTTP request's own headers, never
	// from Credential.Value. Over stdio it has no effect.
	BYOK bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Authz, when set, authorizes every call with Cedar policies
	// (authorize.go); nil keeps today's behaviour: no authorization step.
	Authz *authz.Config
	// Features are the prompts, resources and completion the embedder
	// serves itself on MCP(); the zero value declares tools and logging
	// only, and refuses the other features' methods.
	Features Features
	// Observer watches calls for metrics and traces (kernel/observe); nil
	// observes nothing.
	Observer Observer
	// DynamicTools lets the tool set change after New (AddTools,
	// WithdrawTool; dynamic.go): the server declares tools.listChanged and
	// the HTTP fast path is off (it answers from the set of New).
	DynamicTools bool
	// StateRouter, when set, finds the replica that holds the call an
	// answer (a tools/call with requestState) reaches over HTTP, and the
	// kernel forwards it there (stateroute.go); nil runs every answer here.
	StateRouter StateRouter
	// Tasks, when set, serves MCP tasks (2025-11-25) for the tools that
	// declare TaskSupport: task-augmented tools/call, tasks/get,
	// tasks/result, tasks/list and tasks/cancel (tasks.go).
	Tasks TaskRelay
}

// Server is an MCP server with the kernel's controls around its tools.
type Server struct {
	name      string
	mcp       *mcp.Server
	tools     []Tool
	byName    map[string]*Tool
	opts      Options
	envelope  *untrusted.Envelope
	issuer    *confirm.Issuer
	sealer    *seal.Sealer // requestState handles (mrtr.go)
	audit     audit.Sink
	logger    *slog.Logger
	argDigest *argDigester // keyed hash of the arguments, for the audit (handler.go)
	creds     []credential // declared credentials, values in closures
	outage    outage
	secrets   serverSecrets // what no client may receive: credentials, Options.Secrets, AddSecrets (egress.go)
	sessions  *egressScope  // what the calls of stdio and in-process sessions registered
	egressOff atomic.Bool   // only egress.SetGate sets it, in a test binary
	taskSess  taskSessions  // stdio sessions whose front answers task requests (tasks.go)
	taskTools atomic.Bool   // a tool with TaskSupport was registered (tasks.go)
	authz     *authz.Authorizer
	fast      fastTools        // what the HTTP fast path answers from (fastpath.go)
	dyn       dynamic          // tools added and withdrawn at run time (dynamic.go)
	obs       ServerObserver   // nil: not observed
	peers     *upstream.Client // forwards answers to other replicas (stateroute.go); nil without a StateRouter
}

// New checks every tool's declaration, applies read-only mode and the
// allow/deny lists, and registers what remains on a go-sdk server.
func New(info Info, tools []Tool, opts *Options) (*Server, error) {
	s := &Server{name: info.Name, byName: map[string]*Tool{}}
	if opts != nil {
		s.opts = *opts
	}
	if err := s.setDefaults(); err != nil {
		return nil, err
	}
	for _, t := range tools {
		if err := t.validate(); err != nil {
			return nil, err
		}
		if err := s.opts.Tiers.CheckTier(t.policy.tier()); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.name, err)
		}
		if _, dup := s.byName[t.name]; dup {
			return nil, fmt.Errorf("tool %s declared twice", t.name)
		}
		s.byName[t.name] = &t
	}
	s.dyn.atNew = map[string]bool{}
	for _, t := range tools {
		s.dyn.atNew[t.name] = true
	}
	selected, err := selectTools(tools, s.opts.ReadOnly, s.opts.Allow, s.opts.Deny)
	if err != nil {
		return nil, err
	}
	s.byName = map[string]*Tool{}
	s.fast.impl = &mcp.Implementation{Name: info.Name, Title: info.Title, Version: info.Version}
	if s.fast.implJSON, err = json.Marshal(s.fast.impl); err != nil {
		return nil, err
	}
	s.mcp = mcp.NewServer(s.fast.impl,
		&mcp.ServerOptions{Instructions: info.Instructions, Logger: sdkLogger(s.logger),
			Capabilities: s.capabilities(), SubscribeHandler: s.opts.Features.Subscribe,
			UnsubscribeHandler: s.opts.Features.Unsubscribe, CompletionHandler: s.opts.Features.Complete})
	actions := map[string]int{} // the authorization model has one action a tool, in this order (authzModel)
	for i, t := range tools {
		actions[t.name] = i + 1
	}
	for _, t := range selected {
		t.authzAction = actions[t.name] // a decision finds the tool's plan by index
		if err := s.register(t); err != nil {
			return nil, err
		}
	}
	if s.opts.StateRouter != nil {
		s.peers = newPeerClient()
	}
	s.mcp.AddReceivingMiddleware(s.answerMiddleware) // just outside the go-sdk's multi-round-trip (mrtr_consent.go)
	s.mcp.AddReceivingMiddleware(s.admitMiddleware)
	s.mcp.AddReceivingMiddleware(s.withdrawnMiddleware)
	s.mcp.AddReceivingMiddleware(s.oneRecordMiddleware) // mrtr.go
	if err := s.setupAuthz(tools); err != nil {
		return nil, err
	}
	s.mcp.AddReceivingMiddleware(s.tasksMiddleware)      // tasks.go
	s.mcp.AddReceivingMiddleware(s.capabilityMiddleware) // runs first: added last
	s.observe()
	return s, nil
}

func (s *Server) setDefaults() error {
	if s.opts.Envelope.Source == "" {
		s.opts.Envelope.Source = "upstream"
	}
	s.envelope = &s.opts.Envelope
	s.issuer = s.opts.Confirm
	if s.issuer == nil {
		s.issuer = confirm.NewIssuer(nil, &confirm.Options{Now: s.opts.Now})
	}
	if !s.opts.ConfirmBy.valid() {
		return fmt.Errorf("confirmation path %q: use auto, elicit or token", s.opts.ConfirmBy)
	}
	s.sealer = s.opts.Sealer
	if s.sealer == nil {
		var err error
		if s.sealer, err = newSealer(s.opts.Now); err != nil {
			return err
		}
	}
	s.audit = s.opts.Audit
	if s.audit == nil {
		s.audit = audit.Discard
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	// every line the server logs is scrubbed of its secrets (an error can
	// quote an upstream that echoes one)
	s.logger = slog.New(egress.LogHandler(s.logger.Handler(), s.secrets.get))
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	s.argDigest = newArgDigester()
	creds, err := checkCredentials(s.opts.Credentials, s.opts.BYOK)
	if err != nil {
		return err
	}
	s.creds = creds
	for i, v := range s.opts.Secrets {
		if err := egress.CheckSecret(v); err != nil {
			return fmt.Errorf("kernel: Options.Secrets[%d]: %w", i, err)
		}
	}
	var configured []string
	for _, c := range s.opts.Credentials {
		configured = append(configured, credentialParts(c.Value)...)
	}
	s.secrets.add(append(configured, s.opts.Secrets...)...)
	s.sessions = &egressScope{server: &s.secrets}
	// The server keeps the values only in s.creds and the gate; its copy
	// of the declarations and options carries none.
	s.opts.Secrets = nil
	s.opts.Credentials = slices.Clone(s.opts.Credentials)
	for i := range s.opts.Credentials {
		s.opts.Credentials[i].Value = ""
	}
	return nil
}

// ErrWriteToolReadOnly is New's error when the allow list names a write tool
// while ReadOnly is set: the two settings contradict each other. The error
// names the tool; the caller names its own settings.
var ErrWriteToolReadOnly = errors.New("read-only mode registers no write tool, but the allow list names one")

// selectTools applies read-only mode and the allow and deny lists.
func selectTools(tools []Tool, readOnly bool, allow, deny []string) ([]Tool, error) {
	for i, list := range [][]string{allow, deny} {
		match := []func(string, string) bool{matchName, denies}[i]
		for _, p := range list {
			if !slices.ContainsFunc(tools, func(t Tool) bool { return match(p, t.name) }) {
				return nil, fmt.Errorf("tool list entry %q matches no tool", p)
			}
		}
	}
	var out []Tool
	for _, t := range tools {
		write := t.policy.ReadOnly != Yes
		if readOnly && write {
			for _, p := range allow {
				if strings.TrimSpace(p) == t.name {
					return nil, fmt.Errorf("%w: %s", ErrWriteToolReadOnly, t.name)
				}
			}
			continue
		}
		if len(allow) > 0 && !slices.ContainsFunc(allow, func(p string) bool { return matchName(p, t.name) }) {
			continue
		}
		if slices.ContainsFunc(deny, func(p string) bool { return denies(p, t.name) }) {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// matchName matches an exact name or a "prefix*" pattern, as spelled:
// tool selection is exact, so an allow list naming read_file never
// exposes READ_FILE.
func matchName(pattern, name string) bool {
	pattern = strings.TrimSpace(pattern)
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return pattern == name
}

// denies is a deny list's match: matchName, ignoring case as well, so that
// a deny list errs toward denying every spelling of the name.
func denies(pattern, name string) bool {
	return matchName(strings.ToLower(pattern), strings.ToLower(name))
}

func (s *Server) register(t Tool) error {
	t, mt, h, err := s.prepare(t)
	if err != nil {
		return err
	}
	s.mcp.AddTool(mt, h)
	s.fast.add(mt, h)
	s.tools = append(s.tools, t)
	s.byName[t.name] = &s.tools[len(s.tools)-1]
	return nil
}

// prepare compiles t's argument check and builds what the go-sdk lists and
// calls.
func (s *Server) prepare(t Tool) (Tool, *mcp.Tool, mcp.ToolHandler, error) {
	if t.taskSupport != "" {
		s.taskTools.Store(true) // tasksMiddleware reads tools/list results from now on (tasks.go)
	}
	schema := s.advertised(t)
	check, err := argcheck.Compile(schema)
	if err != nil {
		return t, nil, nil, fmt.Errorf("tool %s: input schema: %w", t.name, err)
	}
	t.args = check
	wire, err := schemaJSON(schema)
	if err != nil {
		return t, nil, nil, fmt.Errorf("tool %s: encoding its input schema: %w", t.name, err)
	}
	p := t.policy
	mt := &mcp.Tool{
		Name:        t.name,
		Title:       t.title,
		Description: t.description,
		InputSchema: wire, // encoded once: AddTool and every tools/list copy it
		Annotations: &mcp.ToolAnnotations{
			Title:           t.title,
			ReadOnlyHint:    p.ReadOnly.bool(),
			DestructiveHint: ptr(p.Destructive.bool()),
			IdempotentHint:  p.Idempotent.bool(),
			OpenWorldHint:   ptr(p.OpenWorld.bool()),
		},
	}
	tp := &t
	return t, mt, s.handler(tp), nil
}

// MCP returns the underlying go-sdk server, to register what the kernel
// does not declare (prompts, resources) on it. Serve the Server itself
// (ServeStdio, HTTPHandler, Connect): serving MCP() directly would bypass
// the egress gate.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Tools returns the registered tools, in declaration order.
func (s *Server) Tools() []Tool {
	s.dyn.mu.RLock()
	defer s.dyn.mu.RUnlock()
	return slices.Clone(s.tools)
}

// sdkLogger passes on only the SDK's warnings and errors: its per-session
// information lines would drown ours.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{Handler: l.Handler(), min: slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{Handler: m.Handler.WithAttrs(a), min: m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: m.Handler.WithGroup(name), min: m.min}
}
