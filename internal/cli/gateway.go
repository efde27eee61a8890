package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/listen"
	"github.com/bulwarkmcp/bulwark/kernel/pipeio"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// gatewayFlags are bulwark gateway's own settings: a configuration file, or
// one stdio server given after the flags with its policy in flags.
type gatewayFlags struct {
	serving
	config          string
	prefix          string
	env             []string
	trust           bool
	readOnlyTools   []string
	writeTools      []string
	confirmTools    []string
	targetArg       string
	callTimeout     time.Duration
	maxResult       int
	dataDir         string
	allowFlagged    bool
	publicEnv       []string
	requireApproval bool
	advertiseURL    string
	args            []string // the server's command line
}

func setupGateway(fs *flag.FlagSet, env Env) func(ctx context.Context) error {
	var c gatewayFlags
	f := newFlags(fs, env)
	c.register(f, "GATEWAY")
	f.String(&c.config, "config", "BULWARK_GATEWAY_CONFIG", "", "the gateway's TOML `FILE` of upstream servers (docs/gateway.md); or give one stdio server's command line after --")
	f.String(&c.prefix, "prefix", "BULWARK_GATEWAY_PREFIX", "upstream", "one server: the prefix of its tool names (<prefix>.<tool>)")
	f.List(&c.env, "env", "BULWARK_GATEWAY_ENV", "one server: the variables of this environment it receives, e.g. PATH,HOME; nothing else reaches it, and every value but PATH, HOME, the locale and -public-env is a secret no client receives")
	f.List(&c.publicEnv, "public-env", "BULWARK_GATEWAY_PUBLIC_ENV", "one server: the variables of -env that hold no secret")
	f.Bool(&c.trust, "trust-annotations", "BULWARK_GATEWAY_TRUST_ANNOTATIONS", false, "one server: take read-only and destructive from its own tool annotations (by default it is untrusted)")
	f.List(&c.readOnlyTools, "read-only-tools", "BULWARK_GATEWAY_READ_ONLY_TOOLS", "one server: its tools that change nothing; every tool on no list is destructive and needs confirmation")
	f.List(&c.writeTools, "write-tools", "BULWARK_GATEWAY_WRITE_TOOLS", "one server: its tools that write but destroy nothing")
	f.List(&c.confirmTools, "confirm-tools", "BULWARK_GATEWAY_CONFIRM_TOOLS", "one server: its tools that need confirmation even when not destructive")
	f.String(&c.targetArg, "target-arg", "BULWARK_GATEWAY_TARGET_ARG", "", "one server: the argument naming what a tool acts on (bound into confirmation tokens, shown in the refusal)")
	f.Duration(&c.callTimeout, "call-timeout", "BULWARK_GATEWAY_CALL_TIMEOUT", gateway.DefaultCallTimeout, "one server: how long a call may take")
	f.Int(&c.maxResult, "max-result-bytes", "BULWARK_GATEWAY_MAX_RESULT_BYTES", gateway.DefaultMaxResultBytes, "one server: the largest result it may send")
	f.String(&c.dataDir, "data-dir", "BULWARK_GATEWAY_DATA_DIR", "", "where the tool pins are kept (default $XDG_DATA_HOME/bulwark/gateway or ~/.local/share/bulwark/gateway; with -redis-url-file they are in Redis)")
	f.Bool(&c.requireApproval, "require-approval", "BULWARK_GATEWAY_REQUIRE_APPROVAL", false, "hide every tool not yet pinned until \"bulwark gateway approve\" (default: pin a new tool on first use, and log it)")
	f.String(&c.advertiseURL, "advertise-url", "BULWARK_GATEWAY_ADVERTISE_URL", "", "replicas: this replica's MCP endpoint as the other replicas reach it (http(s)://HOST:PORT/mcp, a Host -allowed-hosts accepts); with -redis-url-file and -request-state-key-file shared by every replica, the answer to a relayed question (elicitation, sampling) and a task request (tasks/get, tasks/result, tasks/cancel) that reach another replica are forwarded to the one that asked or holds the task, and tasks/list lists every replica's tasks (docs/gateway.md); without it, such an answer is refused there and such a task is unknown")
	f.Bool(&c.allowFlagged, "allow-flagged-definitions", "BULWARK_GATEWAY_ALLOW_FLAGGED_DEFINITIONS", false, "pin a new tool on first use even when the description scan flags its definition (hidden instructions, prompt tags, invisible or bidirectional characters, the envelope's tag); by default such a tool is hidden until approved")
	return func(ctx context.Context) error {
		if err := f.err(); err != nil {
			return err
		}
		c.args = fs.Args()
		return runGateway(ctx, &c, env)
	}
}

// gatewayConfig is the configuration file, or the one server of the
// command line.
func (c *gatewayFlags) gatewayConfig() (gateway.Config, error) {
	switch {
	case c.config != "" && len(c.args) > 0:
		return gateway.Config{}, fmt.Errorf("%w: give either -config or a server's command line after --, not both", errUsage)
	case c.config != "":
		b, err := os.ReadFile(c.config)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return gateway.Config{}, fmt.Errorf("%w: -config: cannot read %s: %v", errUsage, c.config, err)
		}
		cfg, err := gateway.ParseConfig(b)
		if err != nil {
			return cfg, fmt.Errorf("%w: %s: %v", errUsage, c.config, err)
		}
		return cfg, nil
	case len(c.args) == 0:
		return gateway.Config{}, fmt.Errorf("%w: nothing to front: give -config FILE, or a server's command line after -- (bulwark gateway -- npx -y @modelcontextprotocol/server-memory)", errUsage)
	}
	cfg := gateway.Config{CallTimeout: gateway.Duration(c.callTimeout), Upstreams: []gateway.Upstream{{
		Name: "upstream", Prefix: c.prefix, Command: c.args[0], Args: c.args[1:], Env: c.env, PublicEnv: c.publicEnv,
		TrustAnnotations: c.trust, ReadOnlyTools: c.readOnlyTools, WriteTools: c.writeTools,
		ConfirmTools: c.confirmTools, TargetArg: c.targetArg, MaxResultBytes: c.maxResult,
	}}}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %v", errUsage, err)
	}
	return cfg, nil
}

func runGateway(ctx context.Context, c *gatewayFlags, env Env) error {
	opts, logger, err := c.options(env.Stderr)
	if err != nil {
		return err
	}
	if opts.BYOK {
		return fmt.Errorf("%w: -byok does not apply to the gateway: upstream credentials come from its configuration, never from a client", errUsage)
	}
	cfg, err := c.gatewayConfig()
	if err != nil {
		return err
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	pins, closePins, err := c.pinStore(env, logger)
	if err != nil {
		return err
	}
	defer closePins()
	gw, err := gateway.New(cfg, gateway.Deps{Logger: logger, Getenv: getenv, Pinner: pins})
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if c.advertiseURL != "" { // checked before any upstream starts
		if err := c.shareParked(gw, &opts); err != nil {
			return err
		}
	}
	if err := gw.Start(ctx); err != nil {
		return err
	}
	defer gw.Close()
	opts.DynamicTools = true      // upstreams change their tools at run time (pins.go)
	opts.Features = gw.Features() // what the upstreams offer and the gateway relays beside tools
	if tr := gw.TaskRelay(); tr != nil {
		opts.Tasks = tr // tasks of the upstreams that offer them (servers/gateway/tasks.go)
	}
	opts.Envelope = gw.Envelope()
	opts.Credentials = append(opts.Credentials, gw.Credentials()...)
	opts.Secrets = append(opts.Secrets, gw.Secrets()...)
	opts.Audit = gw.Audit(opts.Audit)
	ks, err := kernel.New(kernel.Info{Name: "bulwark-gateway", Title: "bulwark gateway", Version: version(), Instructions: gw.Instructions()}, gw.Tools(), &opts)
	if err != nil {
		return c.kernelError(err)
	}
	if err := gw.Attach(ks); err != nil {
		return err
	}
	logger.Info("bulwark gateway", "upstreams", len(cfg.Upstreams), "tools", len(ks.Tools()))
	if n := gatewayProcs(c.http, getenv, env.Stdin, env.Stdout); n > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n)) // restored for a process that goes on (tests)
		logger.Debug("scheduler", "gomaxprocs", n)
	}
	return c.serve(ctx, ks, env, logger)
}

// shareParked makes the gateway's parked calls (relayed questions awaiting
// the client's answer) and its tasks reachable from every replica: recorded in the
// shared Redis under this replica's -advertise-url, sealed with the shared
// requestState key, and answers routed by the kernel (opts.StateRouter).
func (c *gatewayFlags) shareParked(gw *gateway.Gateway, opts *kernel.Options) error {
	if c.http == "" {
		return fmt.Errorf("%w: -advertise-url applies to replicas serving -http", errUsage)
	}
	if c.redisClient == nil || !c.stateKey.set() || opts.Sealer == nil {
		return fmt.Errorf("%w: -advertise-url needs the store and the key every replica shares: -redis-url-file (BULWARK_REDIS_URL) and -request-state-key-file (BULWARK_REQUEST_STATE_KEY)", errUsage)
	}
	if err := gw.ShareParked(gateway.Replicas{Redis: c.redisClient, KeyPrefix: "bulwark:gateway:parked:", TaskKeyPrefix: "bulwark:gateway:tasks:", Advertise: c.advertiseURL, Sealer: opts.Sealer}); err != nil {
		return fmt.Errorf("%w: -advertise-url: %v", errUsage, err)
	}
	// The other replicas reach this one by that URL: its Host must pass
	// this replica's own Host guard, or every answer forwarded here would
	// be refused (403 host_forbidden).
	if u, err := url.Parse(c.advertiseURL); err == nil {
		if ok, err := httpguard.HostAllowed(c.allowedHosts, listen.Addr(c.http), u.Host); err == nil && !ok {
			return fmt.Errorf("%w: -advertise-url: its host %s is not one this replica accepts; add it to -allowed-hosts", errUsage, u.Host)
		}
	}
	opts.StateRouter = gw
	return nil
}

// gatewayProcs is the number of processors the Go scheduler gets when the
// gateway serves one client over stdio on pipes or sockets: 1, unless the
// operator set GOMAXPROCS; 0 (the runtime's own choice) over HTTP, where
// many clients share it, or when kernel/pipeio does not read stdin or
// stdout (a terminal, a file). A stdio gateway waits on its client and its
// upstreams; with a second processor idle, every goroutine it wakes (a
// request read, an answer delivered) wakes a second thread too, which looks
// for work, finds none and sleeps again. On one processor, with its pipes read through
// kernel/pipeio, the gateway's threads were switched in 2.2 times a relayed
// call instead of 8.1 (docs/performance.md, "bulwark gateway", session 8);
// on one processor without it (a blocking stdin), it measured slower.
func gatewayProcs(http string, getenv func(string) string, stdin, stdout any) int {
	if http != "" || getenv("GOMAXPROCS") != "" || !pipeio.Applies(stdin) || !pipeio.Applies(stdout) {
		return 0
	}
	return 1
}
