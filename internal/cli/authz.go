package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	dnssrv "github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
	rustpadsrv "github.com/bulwarkmcp/bulwark/servers/rustpad"
)

// authzFlags are the authorization flags every server shares.
type authzFlags struct {
	policy, entities string
}

func (a *authzFlags) register(f *flags) {
	f.String(&a.policy, "authz-policy", "BULWARK_AUTHZ_POLICY", "", "Cedar policy `FILE`: who may call which tool on which target (docs/authorization.md); reloaded on SIGHUP and on change; unset: no authorization step")
	f.String(&a.entities, "authz-entities", "BULWARK_AUTHZ_ENTITIES", "", "Cedar JSON entities `FILE` for -authz-policy: users' groups")
}

// config is the kernel's authorization configuration, nil without a policy.
func (a *authzFlags) config(logger *slog.Logger) (*authz.Config, error) {
	if a.policy == "" {
		if a.entities != "" {
			return nil, fmt.Errorf("%w: -authz-entities needs -authz-policy", errUsage)
		}
		return nil, nil
	}
	return &authz.Config{PolicyFile: a.policy, EntitiesFile: a.entities, Logger: logger}, nil
}

// watch reloads the policy on SIGHUP and on change until ctx ends.
func (a *authzFlags) watch(ctx context.Context, srv *kernel.Server) {
	if az := srv.Authorizer(); az != nil {
		go az.Watch(ctx, authz.WatchOptions{})
	}
}

// runAuthz is `bulwark authz check|schema`: operators test their policy
// files against the tools of a server without serving. check exits 0 when
// the call would be allowed, 1 when it would be denied and 2 on an error,
// as test commands do.
func runAuthz(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || (args[0] != "check" && args[0] != "schema") {
		fmt.Fprintln(env.Stderr, "Usage: bulwark authz check|schema -server dns|rustpad|gateway [flags]  (bulwark authz check -help)")
		return 2
	}
	var c authzCheck
	fs := authzFlagSet(args[0], &c)
	fs.SetOutput(env.Stderr)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var err error
	allowed := true
	if args[0] == "schema" {
		err = c.schema(ctx, env)
	} else {
		allowed, err = c.check(ctx, env)
	}
	switch {
	case err != nil:
		fmt.Fprintf(env.Stderr, "bulwark authz %s: %v\n", args[0], err)
		return 2
	case !allowed:
		return 1
	}
	return 0
}

// authzFlagSet is the flag set of `bulwark authz sub` (check or schema),
// into c; completion lists its flags too.
func authzFlagSet(sub string, c *authzCheck) *flag.FlagSet {
	fs := flag.NewFlagSet("bulwark authz "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.server, "server", "dns", "the server whose tools the policy speaks of: dns, rustpad or gateway")
	fs.StringVar(&c.config, "config", "", "with -server gateway: the gateway's TOML `FILE`; its upstreams are started to list their tools, then stopped")
	if sub == "check" {
		fs.StringVar(&c.policy, "policy", "", "the Cedar policy `FILE`")
		fs.StringVar(&c.entities, "entities", "", "the Cedar JSON entities `FILE` (optional)")
		fs.StringVar(&c.principal, "principal", "", "the caller's id (an API key's id, an OAuth subject, or local)")
		fs.StringVar(&c.plan, "plan", "", "the caller's plan")
		fs.StringVar(&c.groups, "groups", "", "the caller's groups, comma-separated (as an API-key file's groups= or a token's groups claim gives them)")
		fs.StringVar(&c.scopes, "scopes", "", "the caller's OAuth scopes, comma-separated")
		fs.StringVar(&c.auth, "auth", identity.SchemeAPIKey, "how the caller authenticated: none, apikey or oauth")
		fs.StringVar(&c.transport, "transport", "http", "the transport of the call: http or stdio")
		fs.StringVar(&c.tool, "tool", "", "the tool")
		fs.StringVar(&c.args, "args", "{}", "the call's arguments, a JSON object")
	}
	return fs
}

type authzCheck struct {
	server, config, policy, entities, principal, plan, auth, transport, tool, args string
	groups, scopes                                                                 string
}

// tools builds the server's tools on a harmless backend: an empty local
// zone store (zone names resolve to their canonical spelling; ids to no
// zone), an unreachable Rustpad (pad targets need no request), or the
// gateway's upstreams, started to list their tools and stopped again (a
// target is resolved from the arguments alone, so no call reaches them).
func (c *authzCheck) tools(ctx context.Context, env Env, dir string) (string, []kernel.Tool, kernel.Features, error) {
	var none kernel.Features
	if c.config != "" && c.server != "gateway" {
		return "", nil, none, fmt.Errorf("%w: -config is for -server gateway", errUsage)
	}
	switch c.server {
	case "dns":
		p, err := localzone.New(dir, &localzone.Options{DisableSync: true})
		if err != nil {
			return "", nil, none, err
		}
		srv, err := dnssrv.New(dnssrv.Config{}, dnssrv.Deps{Provider: p})
		if err != nil {
			return "", nil, none, err
		}
		return "bulwark-dns", srv.Tools(), none, nil
	case "rustpad":
		srv, err := rustpadsrv.New(rustpadsrv.Config{URL: "http://127.0.0.1:9"}, rustpadsrv.Deps{})
		if err != nil {
			return "", nil, none, err
		}
		return "bulwark-rustpad", srv.Tools(), none, nil
	case "gateway":
		tools, f, err := c.gatewayTools(ctx, env)
		return "bulwark-gateway", tools, f, err
	}
	return "", nil, none, fmt.Errorf("%w: -server %q: use dns, rustpad or gateway", errUsage, c.server)
}

// gatewayTools starts the upstreams of the gateway configuration -config,
// takes their tools as the gateway would serve them, and the features it
// relays as the authorization model sees them (every tool they list:
// no pins are consulted) and stops them.
func (c *authzCheck) gatewayTools(ctx context.Context, env Env) ([]kernel.Tool, kernel.Features, error) {
	var f kernel.Features
	if c.config == "" {
		return nil, f, fmt.Errorf("%w: -server gateway needs -config FILE, the gateway's configuration", errUsage)
	}
	cfg, err := (&gatewayFlags{config: c.config}).gatewayConfig()
	if err != nil {
		return nil, f, err
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw, err := gateway.New(cfg, gateway.Deps{Logger: logger, Getenv: env.Getenv})
	if err != nil {
		return nil, f, fmt.Errorf("%w: %v", errUsage, err)
	}
	defer gw.Close()
	if err := gw.Start(ctx); err != nil {
		return nil, f, err
	}
	all := gw.Features() // what a policy speaks of; nothing is served here
	f.Resources, f.ReadTarget = all.Resources, all.ReadTarget
	return gw.Tools(), f, nil
}

func (c *authzCheck) schema(ctx context.Context, env Env) error {
	return c.withTools(ctx, env, func(name string, tools []kernel.Tool, f kernel.Features) error {
		s, err := kernel.AuthzSchemaFeatures(name, tools, f)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(env.Stdout, s)
		return err
	})
}

// withTools runs fn with the server's tools on a harmless backend in a
// temporary directory, removed afterwards.
func (c *authzCheck) withTools(ctx context.Context, env Env, fn func(name string, tools []kernel.Tool, f kernel.Features) error) error {
	dir, err := os.MkdirTemp("", "bulwark-authz-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	name, tools, f, err := c.tools(ctx, env, dir)
	if err != nil {
		return err
	}
	return fn(name, tools, f)
}

// check prints what the policy decides for the call, on each of its
// targets, and reports whether it would be allowed.
func (c *authzCheck) check(ctx context.Context, env Env) (allowed bool, err error) {
	if c.policy == "" || c.principal == "" || c.tool == "" {
		return false, fmt.Errorf("%w: -policy, -principal and -tool are required", errUsage)
	}
	if c.transport != "http" && c.transport != "stdio" {
		return false, fmt.Errorf("%w: -transport %q: use http or stdio", errUsage, c.transport)
	}
	if !json.Valid([]byte(c.args)) {
		return false, fmt.Errorf("%w: -args is not JSON", errUsage)
	}
	err = c.withTools(ctx, env, func(name string, tools []kernel.Tool, f kernel.Features) error {
		ks, err := kernel.New(kernel.Info{Name: name}, tools, &kernel.Options{Features: f, Authz: &authz.Config{PolicyFile: c.policy, EntitiesFile: c.entities}})
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		p := identity.Principal{ID: c.principal, Plan: c.plan, Scheme: c.auth, Groups: splitList(c.groups), Scopes: splitList(c.scopes)}
		all, err := ks.CheckAuthzTargets(ctx, p, c.transport, c.tool, json.RawMessage(c.args))
		if err != nil {
			var te *kernel.Error
			if errors.As(err, &te) {
				return fmt.Errorf("%w: %s", errUsage, te.Message)
			}
			return err
		}
		allowed = printDecision(env.Stdout, name, c.principal, c.tool, all)
		return nil
	})
	return allowed, err
}

// printDecision writes the verdict, the principal, the action, and each
// target with (when there are several) its own verdict; then the policies
// that decided — the first denial's, else the last target's. It reports
// whether every target was allowed.
func printDecision(w io.Writer, server, principal, tool string, all []kernel.TargetDecision) bool {
	decided := all[len(all)-1]
	for _, td := range all {
		if !td.Decision.Allow {
			decided = td
			break
		}
	}
	verdict := map[bool]string{true: "ALLOW", false: "DENY"}
	fmt.Fprintf(w, "%s\nprincipal: User::%q\naction:    Action::%q\n", verdict[decided.Decision.Allow], principal, tool)
	for _, td := range all {
		target := "Server::" + fmt.Sprintf("%q", server)
		if td.Resource.Type != "" {
			target = td.Resource.Type + "::" + fmt.Sprintf("%q", td.Resource.ID)
		}
		if len(all) == 1 {
			fmt.Fprintf(w, "resource:  %s\n", target)
			continue
		}
		fmt.Fprintf(w, "resource:  %s  %s (%s)\n", target, verdict[td.Decision.Allow], decidedBy(td.Decision))
	}
	fmt.Fprintf(w, "decided by: %s\n", decidedBy(decided.Decision))
	return decided.Decision.Allow
}

// decidedBy names the policies behind a decision.
func decidedBy(d authz.Decision) string {
	switch {
	case len(d.Errors) > 0:
		return fmt.Sprintf("evaluation failed in: %s (an error denies)", strings.Join(d.Errors, ", "))
	case len(d.Policies) > 0:
		return strings.Join(d.Policies, ", ")
	}
	return "no policy permits it (deny by default)"
}
