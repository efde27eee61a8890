package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	dnssrv "github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
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
// files against the tools of a server without serving.
func runAuthz(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || (args[0] != "check" && args[0] != "schema") {
		fmt.Fprintln(env.Stderr, "Usage: bulwark authz check|schema -server dns|rustpad [flags]  (bulwark authz check -help)")
		return 2
	}
	fs := flag.NewFlagSet("bulwark authz "+args[0], flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var c authzCheck
	fs.StringVar(&c.server, "server", "dns", "the server whose tools the policy speaks of: dns or rustpad")
	if args[0] == "check" {
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
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var err error
	if args[0] == "schema" {
		err = c.schema(env)
	} else {
		err = c.check(ctx, env)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "bulwark authz %s: %v\n", args[0], err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

type authzCheck struct {
	server, policy, entities, principal, plan, auth, transport, tool, args string
	groups, scopes                                                         string
}

// tools builds the server's tools on a harmless backend: an empty local
// zone store (zone names resolve to their canonical spelling; ids to no
// zone) or an unreachable Rustpad (pad targets need no request).
func (c *authzCheck) tools(dir string) (string, []kernel.Tool, error) {
	switch c.server {
	case "dns":
		p, err := localzone.New(dir, &localzone.Options{DisableSync: true})
		if err != nil {
			return "", nil, err
		}
		srv, err := dnssrv.New(dnssrv.Config{}, dnssrv.Deps{Provider: p})
		if err != nil {
			return "", nil, err
		}
		return "bulwark-dns", srv.Tools(), nil
	case "rustpad":
		srv, err := rustpadsrv.New(rustpadsrv.Config{URL: "http://127.0.0.1:9"}, rustpadsrv.Deps{})
		if err != nil {
			return "", nil, err
		}
		return "bulwark-rustpad", srv.Tools(), nil
	}
	return "", nil, fmt.Errorf("%w: -server %q: use dns or rustpad", errUsage, c.server)
}

func (c *authzCheck) schema(env Env) error {
	return c.withTools(func(name string, tools []kernel.Tool) error {
		s, err := kernel.AuthzSchema(name, tools)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(env.Stdout, s)
		return err
	})
}

// withTools runs fn with the server's tools on a harmless backend in a
// temporary directory, removed afterwards.
func (c *authzCheck) withTools(fn func(name string, tools []kernel.Tool) error) error {
	dir, err := os.MkdirTemp("", "bulwark-authz-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	name, tools, err := c.tools(dir)
	if err != nil {
		return err
	}
	return fn(name, tools)
}

func (c *authzCheck) check(ctx context.Context, env Env) error {
	if c.policy == "" || c.principal == "" || c.tool == "" {
		return fmt.Errorf("%w: -policy, -principal and -tool are required", errUsage)
	}
	if c.transport != "http" && c.transport != "stdio" {
		return fmt.Errorf("%w: -transport %q: use http or stdio", errUsage, c.transport)
	}
	if !json.Valid([]byte(c.args)) {
		return fmt.Errorf("%w: -args is not JSON", errUsage)
	}
	return c.withTools(func(name string, tools []kernel.Tool) error {
		ks, err := kernel.New(kernel.Info{Name: name}, tools, &kernel.Options{Authz: &authz.Config{PolicyFile: c.policy, EntitiesFile: c.entities}})
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		p := identity.Principal{ID: c.principal, Plan: c.plan, Scheme: c.auth, Groups: splitList(c.groups), Scopes: splitList(c.scopes)}
		d, res, err := ks.CheckAuthz(ctx, p, c.transport, c.tool, json.RawMessage(c.args))
		if err != nil {
			var te *kernel.Error
			if errors.As(err, &te) {
				return fmt.Errorf("%w: %s", errUsage, te.Message)
			}
			return err
		}
		verdict := "DENY"
		if d.Allow {
			verdict = "ALLOW"
		}
		target := "Server::" + fmt.Sprintf("%q", name)
		if res.Type != "" {
			target = res.Type + "::" + fmt.Sprintf("%q", res.ID)
		}
		fmt.Fprintf(env.Stdout, "%s\nprincipal: User::%q\naction:    Action::%q\nresource:  %s\n", verdict, c.principal, c.tool, target)
		switch {
		case len(d.Errors) > 0:
			fmt.Fprintf(env.Stdout, "evaluation failed in: %s (an error denies)\n", strings.Join(d.Errors, ", "))
		case len(d.Policies) > 0:
			fmt.Fprintf(env.Stdout, "decided by: %s\n", strings.Join(d.Policies, ", "))
		default:
			fmt.Fprintln(env.Stdout, "decided by: no policy permits it (deny by default)")
		}
		return nil
	})
}
