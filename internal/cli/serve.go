package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/listen"
	"github.com/bulwarkmcp/bulwark/kernel/memory"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
)

// serving holds the flags every server shares: transport, tool selection,
// audit, and the HTTP hardening.
type serving struct {
	http           string
	readOnly       bool
	allow, deny    []string
	auditTo        string
	logLevel       string
	confirmTTL     time.Duration
	confirmBy      string
	stateKey       secret
	rateLimit      autoInt
	storeOutage    string
	plans          []string
	allowedHosts   []string
	allowedOrigins []string
	anyOrigin      bool
	auth           string
	apiKeysFile    string
	oauthResource  string
	oauthIssuer    string
	oauthJWKS      string
	oauthScopes    []string
	oauthGroups    string
	byok           bool
	noFastPath     bool
	floodLimit     autoInt
	maxBodyPtr     *int
	env            string
	redisConn                 // redis.go
	prefix         string     // the upstream's variable prefix (HETZNER, RUSTPAD)
	authz          authzFlags // authz.go
	obs            observing
}

// register adds the shared flags. The generic settings have neutral names
// (BULWARK_READ_ONLY, BULWARK_ALLOW_TOOLS, BULWARK_DENY_TOOLS); prefix names
// the established variables of the server's upstream, kept as aliases
// (HETZNER → HETZNER_READ_ONLY, …).
func (s *serving) register(f *flags, prefix string) {
	s.prefix = prefix
	f.String(&s.http, "http", "BULWARK_HTTP", "", "serve Streamable HTTP at `ADDR`/mcp instead of stdio (a bare :port binds 127.0.0.1)")
	f.Bool(&s.readOnly, "read-only", "BULWARK_READ_ONLY|"+prefix+"_READ_ONLY", false, "register only the read-only tools")
	f.List(&s.allow, "allow-tools", "BULWARK_ALLOW_TOOLS|"+prefix+"_ALLOW_TOOLS", "only these tools (exact names or prefix*)")
	f.List(&s.deny, "deny-tools", "BULWARK_DENY_TOOLS|"+prefix+"_DENY_TOOLS", "not these tools (exact names or prefix*)")
	f.String(&s.auditTo, "audit", "BULWARK_AUDIT", "", "write one JSON line per tool call to `PATH` (or \"stderr\")")
	f.String(&s.logLevel, "log-level", "BULWARK_LOG_LEVEL", "info", "log level: debug, info, warn or error (logs go to stderr)")
	f.Duration(&s.confirmTTL, "confirm-ttl", "BULWARK_CONFIRM_TTL", confirm.DefaultTTL, "how long a confirmation token stays valid")
	f.String(&s.confirmBy, "confirm", "BULWARK_CONFIRM", string(kernel.ConfirmAuto), "how gated calls are confirmed: auto (ask the person by elicitation where the client declares it, else a token), elicit (only ask the person) or token")
	f.Secret(&s.stateKey, "request-state-key-file", "BULWARK_REQUEST_STATE_KEY", "the secret (32+ bytes, hex or base64) sealing requestState handles of multi-round-trip calls; replicas must share it (default: a random key per process)")
	f.AutoInt(&s.rateLimit, "rate-limit", "BULWARK_RATE_LIMIT", fmt.Sprintf("`N` tool calls per minute per principal, 0 for no limit (auto: none over stdio, %d on a loopback listener, %d beyond)", loopbackRateLimit, ratelimit.DefaultLimit))
	f.String(&s.storeOutage, "store-outage", "BULWARK_STORE_OUTAGE", outageRefuse, "while the shared-state Redis is unreachable: "+outageRefuse+" every call, or "+outageServeReads+" (read-only tools go on under a per-process limit; writes and confirmations are still refused)")
	f.List(&s.plans, "plans", "BULWARK_PLANS", "plan names, lowest first, that tool tiers refer to (default free,pro,enterprise)")
	f.List(&s.allowedHosts, "allowed-hosts", "BULWARK_ALLOWED_HOSTS", "HTTP: Host values to accept (default: the loopback names); set it behind a reverse proxy")
	f.List(&s.allowedOrigins, "allowed-origins", "BULWARK_ALLOWED_ORIGINS", "HTTP: browser origins to accept, or * (default: the server's own loopback origins)")
	f.Bool(&s.anyOrigin, "insecure-allow-any-origin", "BULWARK_INSECURE_ALLOW_ANY_ORIGIN", false, "HTTP: accept -allowed-origins * (any web page may then call this server from a browser)")
	f.String(&s.auth, "auth", "BULWARK_AUTH", "none", "HTTP: authentication: none (loopback only), apikey or oauth")
	f.String(&s.apiKeysFile, "api-keys-file", "BULWARK_API_KEYS_FILE", "", "HTTP: `FILE` of \"<sha256-hex> <plan> [id] [groups=a,b]\" lines, for -auth apikey")
	f.String(&s.oauthResource, "oauth-resource", "BULWARK_OAUTH_RESOURCE", "", "HTTP: this server's canonical URL, the audience tokens must name (-auth oauth)")
	f.String(&s.oauthIssuer, "oauth-issuer", "BULWARK_OAUTH_ISSUER", "", "HTTP: the authorization server's issuer (-auth oauth)")
	f.String(&s.oauthJWKS, "oauth-jwks", "BULWARK_OAUTH_JWKS", "", "HTTP: the issuer's JWKS, a file or an https URL (-auth oauth)")
	f.List(&s.oauthScopes, "oauth-scopes", "BULWARK_OAUTH_SCOPES", "HTTP: scopes every token must grant")
	f.String(&s.oauthGroups, "oauth-groups-claim", "BULWARK_OAUTH_GROUPS_CLAIM", "groups", "HTTP: the token claim that lists the caller's groups, for --authz-policy")
	f.Bool(&s.byok, "byok", "BULWARK_BYOK", false, "HTTP: take provider credentials from each request's headers, never from the environment")
	f.AutoInt(&s.floodLimit, "flood-limit", "BULWARK_FLOOD_LIMIT", fmt.Sprintf("HTTP: `N` requests per 10 s per client address, before authentication (auto: %d on a loopback listener, %d beyond)", loopbackFloodLimit, httpguard.DefaultFloodLimit))
	f.Bool(&s.noFastPath, "disable-fast-path", "BULWARK_DISABLE_FAST_PATH", false, "send every request through the go-sdk (by default the kernel answers tools/call, tools/list and ping itself, with the same answers: stateless HTTP requests, and stdio once the session is initialized)")
	var maxBody int
	f.Int(&maxBody, "max-body-bytes", "BULWARK_MAX_BODY_BYTES", httpguard.DefaultMaxBodyBytes, "HTTP: the largest request body")
	s.maxBodyPtr = &maxBody
	s.env = f.getenv("BULWARK_ENV")
	s.registerRedis(f, "shared state for replicas", true)
	s.authz.register(f)
	s.obs.register(f)
}

// Limits by deployment. Over stdio the one local user has no per-principal
// limit unless one is asked for; a loopback listener serves agents on the
// same machine, sized for an agent at work (paging a 5,000-record zone
// twice is about 100 calls in seconds); a listener reachable from elsewhere
// gets the strict defaults (the HuGR kernel's 100 calls a minute, the
// Vulnetix edge's 100 requests per 10 s).
const (
	loopbackRateLimit  = 1000 // tool calls per minute per principal
	loopbackFloodLimit = 1000 // requests per 10 s per client address
)

// The values of -store-outage.
const (
	outageRefuse     = "refuse"
	outageServeReads = "serve-reads"
)

// limits returns the per-principal limit (calls per minute, 0 for none) and
// the flood limit (requests per 10 s): the values given, else the
// deployment's defaults.
func (s *serving) limits() (rate, flood int) {
	switch {
	case s.http == "":
		rate, flood = 0, 0
	case listen.Loopback(s.http):
		rate, flood = loopbackRateLimit, loopbackFloodLimit
	default:
		rate, flood = ratelimit.DefaultLimit, httpguard.DefaultFloodLimit
	}
	return s.rateLimit.or(rate), s.floodLimit.or(flood)
}

// kernelError reports kernel.New's error as a usage error that names the
// settings to change.
func (s *serving) kernelError(err error) error {
	if errors.Is(err, kernel.ErrWriteToolReadOnly) {
		return fmt.Errorf("%w: %v: -read-only (BULWARK_READ_ONLY or %s_READ_ONLY) is on, so remove the tool from -allow-tools (BULWARK_ALLOW_TOOLS or %s_ALLOW_TOOLS) or turn read-only off",
			errUsage, err, s.prefix, s.prefix)
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}

// options builds the kernel options shared by every server.
func (s *serving) options(stderr io.Writer) (kernel.Options, *slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(s.logLevel)); err != nil {
		return kernel.Options{}, nil, fmt.Errorf("%w: -log-level %q: use debug, info, warn or error", errUsage, s.logLevel)
	}
	if s.http != "" {
		if _, err := httpAddr(s.http); err != nil {
			return kernel.Options{}, nil, err
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	opts := kernel.Options{ReadOnly: s.readOnly, Allow: s.allow, Deny: s.deny, Logger: logger, BYOK: s.byok && s.http != ""}
	var err error
	if opts.Authz, err = s.authz.config(logger); err != nil {
		return opts, nil, err
	}
	if s.confirmTTL <= 0 {
		return opts, nil, fmt.Errorf("%w: -confirm-ttl must be positive", errUsage)
	}
	var tokens confirm.Store   // nil: in memory
	var limits ratelimit.Store // nil: in memory
	if s.redisURL.set() || s.redisPassword.set() {
		shared, err := s.sharedStore(logger)
		if err != nil {
			return opts, nil, err
		}
		tokens, limits = shared, shared
	}
	opts.Confirm = confirm.NewIssuer(tokens, &confirm.Options{TTL: s.confirmTTL})
	if err := s.confirmation(&opts, logger); err != nil {
		return opts, nil, err
	}
	plans := s.plans
	if len(plans) == 0 {
		plans = ratelimit.DefaultPlans
	}
	tiers, err := ratelimit.NewTiers(plans...)
	if err != nil {
		return opts, nil, fmt.Errorf("%w: -plans: %v", errUsage, err)
	}
	opts.Tiers = tiers
	rate, _ := s.limits()
	if rate < 0 {
		return opts, nil, fmt.Errorf("%w: -rate-limit must not be negative", errUsage)
	}
	if rate > 0 {
		if opts.Limiter, err = ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: rate, Window: time.Minute, Store: limits, Setting: "--rate-limit"}); err != nil {
			return opts, nil, err
		}
	}
	switch s.storeOutage {
	case outageRefuse:
	case outageServeReads:
		opts.StoreOutage.ServeReads = true
	default:
		return opts, nil, fmt.Errorf("%w: -store-outage %q: use %s or %s", errUsage, s.storeOutage, outageRefuse, outageServeReads)
	}
	opts.StoreOutage.Setting = "--store-outage"
	sink, err := s.auditSink(stderr)
	if err != nil {
		return opts, nil, err
	}
	opts.Audit = sink
	if opts.Observer, err = s.obs.observer(); err != nil {
		return opts, nil, err
	}
	return opts, logger, nil
}

func (s *serving) auditSink(stderr io.Writer) (audit.Sink, error) {
	switch s.auditTo {
	case "":
		return audit.Discard, nil
	case "stderr":
		return audit.NewJSONLines(stderr), nil
	}
	f, err := os.OpenFile(s.auditTo, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the audit file: %w", err)
	}
	return audit.NewJSONLines(f), nil
}

// httpOptions builds the HTTP surface's options, validating every
// combination before anything listens.
func (s *serving) httpOptions() (kernel.HTTPOptions, error) {
	o := kernel.HTTPOptions{Addr: s.http, Env: s.env, DisableFastPath: s.noFastPath}
	if _, err := httpAddr(s.http); err != nil {
		return o, err
	}
	o.Guards.Hosts = s.allowedHosts
	if len(s.allowedOrigins) > 0 {
		o.Guards.CORS = &httpguard.CORSOptions{Origins: s.allowedOrigins}
		if err := o.Guards.CORS.Validate(); err != nil {
			return o, fmt.Errorf("%w: -allowed-origins: %v", errUsage, err)
		}
		if len(s.allowedOrigins) == 1 && s.allowedOrigins[0] == "*" && !s.anyOrigin {
			return o, fmt.Errorf("%w: -allowed-origins *: any web page the user opens could call this server from the browser, whatever -auth is; list the origins, or pass -insecure-allow-any-origin to accept that", errUsage)
		}
	}
	_, flood := s.limits()
	if flood <= 0 {
		return o, fmt.Errorf("%w: -flood-limit must be positive (put a trusted edge in front and raise it, rather than turn it off)", errUsage)
	}
	o.Guards.Flood = &httpguard.FloodOptions{Limit: flood, Window: 10 * time.Second, Setting: "--flood-limit"}
	o.Guards.MaxBodyBytes = int64(*s.maxBodyPtr)
	switch s.auth {
	case "none":
		if !listen.Loopback(s.http) {
			return o, fmt.Errorf("%w: -http %s listens beyond loopback without authentication: use -auth apikey or -auth oauth", errUsage, s.http)
		}
	case "apikey":
		if s.apiKeysFile == "" {
			return o, fmt.Errorf("%w: -auth apikey needs -api-keys-file", errUsage)
		}
		keys, err := identity.LoadAPIKeys(s.apiKeysFile)
		if err != nil {
			return o, fmt.Errorf("%w: %v", errUsage, err)
		}
		o.Auth = keys
	case "oauth":
		a, err := s.oauth()
		if err != nil {
			return o, fmt.Errorf("%w: %v", errUsage, err)
		}
		o.Auth, o.OAuth = a, a
	default:
		return o, fmt.Errorf("%w: -auth %q: use none, apikey or oauth", errUsage, s.auth)
	}
	return o, nil
}

func (s *serving) oauth() (*identity.OAuth, error) {
	if s.oauthResource == "" || s.oauthIssuer == "" || s.oauthJWKS == "" {
		return nil, errors.New("-auth oauth needs -oauth-resource, -oauth-issuer and -oauth-jwks")
	}
	var keys *identity.JWKS
	var err error
	if strings.Contains(s.oauthJWKS, "://") {
		if keys, err = identity.NewJWKSURL(s.oauthJWKS, nil); err == nil {
			// Fetch it now: a JWKS that cannot be read stops startup
			// rather than failing every request.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = keys.Refresh(ctx)
			cancel()
		}
	} else {
		keys, err = identity.NewJWKSFile(s.oauthJWKS, nil)
	}
	if err != nil {
		return nil, err
	}
	return identity.NewOAuth(s.oauthResource, s.oauthIssuer, keys, &identity.OAuthOptions{RequiredScopes: s.oauthScopes, GroupsClaim: s.oauthGroups})
}

// serve runs srv over stdio or HTTP until ctx ends.
func (s *serving) serve(ctx context.Context, srv *kernel.Server, env Env, logger *slog.Logger) error {
	if env.doctor != nil {
		return env.doctor.serve(ctx, s, srv)
	}
	s.authz.watch(ctx, srv)
	stop, err := s.obs.start(ctx, logger)
	if err != nil {
		return err
	}
	defer stop()
	if s.http == "" {
		if isTerminal(env.Stdin) {
			fmt.Fprintln(env.Stderr, stdinHint)
		}
		return srv.ServeStdioWith(ctx, env.Stdin, env.Stdout, kernel.StdioOptions{DisableFastPath: s.noFastPath})
	}
	o, err := s.httpOptions()
	if err != nil {
		return err
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	gc, limit := memory.Apply(getenv)
	logger.Debug("memory policy", "gogc", gc, "memory_limit", limit)
	return srv.ListenAndServe(ctx, o, func(addr string) {
		logger.Info("serving Streamable HTTP", "url", "http://"+addr+kernel.MCPPath)
	})
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

func portOf(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return p
}

// httpAddr checks an -http value and returns the address it binds
// (listen.Parse: a bare port binds 127.0.0.1), so that a mistyped one stops
// startup with a one-line reason instead of an error from deep in net.Listen.
func httpAddr(v string) (string, error) {
	addr, err := listen.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%w: -http %q is not an address: use :PORT or HOST:PORT (e.g. -http :8080)", errUsage, v)
	}
	return addr, nil
}

// stdinHint is printed when bulwark is started from a terminal: over stdio
// it waits for an MCP client's JSON-RPC, which a person does not type.
const stdinHint = "bulwark: waiting for an MCP client on stdin. Start bulwark from a client's configuration (docs/clients/), " +
	"run `bulwark doctor` to check the setup, or serve HTTP with --http :8080. Ctrl-C to stop."

// isTerminal reports whether r is a terminal; a variable so tests can say so.
var isTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	return fileIsTerminal(f)
}

// confirmation sets the confirmation path and the requestState sealer.
func (s *serving) confirmation(opts *kernel.Options, logger *slog.Logger) error {
	switch p := kernel.ConfirmPath(s.confirmBy); p {
	case kernel.ConfirmAuto, kernel.ConfirmElicit, kernel.ConfirmToken:
		opts.ConfirmBy = p
	default:
		return fmt.Errorf("%w: -confirm %q: use auto, elicit or token", errUsage, s.confirmBy)
	}
	if !s.stateKey.set() {
		if s.redisURL.set() {
			logger.Warn("replicas share a store but no -request-state-key-file: a multi-round-trip retry (consent by elicitation on 2026-07-28) that reaches another replica is refused")
		}
		return nil
	}
	master, err := seal.ParseKey(s.stateKey.value)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errUsage, s.stateKey.source, err)
	}
	if opts.Sealer, err = seal.New(master, nil); err != nil {
		return fmt.Errorf("%w: %s: %v", errUsage, s.stateKey.source, err)
	}
	return nil
}
