// Package cli is the bulwark command line: one explicit table of servers,
// each turning flags and environment variables into its Config, and the
// serving of the result over stdio or HTTP. The process's environment and
// streams are injected (Env), so the whole binary is testable.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Env is what the command gets from the operating system.
type Env struct {
	Args []string
	// Getenv reads a variable; Unsetenv removes one (credentials are removed
	// as soon as they are read).
	Getenv   func(string) string
	Unsetenv func(string) error
	Stdin    io.ReadCloser
	Stdout   io.WriteCloser
	Stderr   io.Writer

	// doctor, when set, replaces serving with doctor's checks.
	doctor *doctorRun
}

// Version and Commit are set at build time by scripts/release, with
// -ldflags "-X ...cli.Version=v1.2.3 -X ...cli.Commit=<sha>"; otherwise
// the version comes from the module's build info.
var (
	Version = ""
	Commit  = ""
)

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// versionLine is what `bulwark version` prints: the version, and the
// commit, Go version and platform it was built from.
func versionLine() string {
	commit := Commit
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("%s (commit %s, %s %s/%s)", version(), commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// command is one server (or helper) of the binary.
type command struct {
	name    string
	summary string
	// flags registers the command's flags; run is called after parsing.
	setup func(fs *flag.FlagSet, env Env) func(ctx context.Context) error
	// needs names the variable without which the server has nothing to
	// serve; `bulwark doctor` without a server skips it when unset.
	needs string
	// unconfigured, when set, says why `bulwark doctor` without a server
	// skips this optional one ("" when it is configured): for servers that
	// several settings can configure (vdb: a key, or a stored sign-in).
	unconfigured func(getenv func(string) string) string
	// args: the command takes arguments after its flags (the gateway's
	// `-- COMMAND [ARGS…]`); run reads them from the flag set.
	args bool
}

// commands is the one table of what the binary serves.
func commands() []command {
	return []command{
		{name: "dns", summary: "DNS zones: a local zone store with an authoritative DNS responder (default), or Hetzner Cloud DNS", setup: setupDNS},
		{name: "rustpad", summary: "Rustpad collaborative editor pads (RUSTPAD_URL)", setup: setupRustpad, needs: "RUSTPAD_URL"},
		{name: "vdb", summary: "the Vulnetix vulnerability database, read-only (VULNETIX_API_KEY, or sign in)", setup: setupVDB, unconfigured: vdbUnconfigured},
		{name: "gateway", summary: "the kernel's controls in front of other MCP servers (-config FILE, or -- COMMAND [ARGS...])", setup: setupGateway, needs: "BULWARK_GATEWAY_CONFIG", args: true},
	}
}

// errUsage marks errors that are the caller's mistake (exit code 2).
var errUsage = errors.New("usage")

// Run runs the command line and returns the process's exit code.
func Run(ctx context.Context, env Env) int {
	if len(env.Args) == 0 {
		usage(env.Stderr)
		return 2
	}
	switch name := env.Args[0]; name {
	case "help", "-h", "-help", "--help":
		if len(env.Args) > 1 {
			// Asked-for help goes to stdout, like `bulwark help`.
			henv := env
			henv.Stderr = env.Stdout
			return runCommand(ctx, henv, env.Args[1], []string{"-help"})
		}
		usage(env.Stdout)
		return 0
	case "doctor":
		return runDoctor(ctx, env, env.Args[1:])
	case "completion":
		return runCompletion(env, env.Args[1:])
	case "authz":
		return runAuthz(ctx, env, env.Args[1:])
	case "gateway":
		if len(env.Args) > 1 && env.Args[1] == "approve" {
			return runGatewayApprove(ctx, env, env.Args[2:])
		}
		if len(env.Args) > 1 && env.Args[1] == "import" {
			return runGatewayImport(ctx, env, env.Args[2:])
		}
		return runCommand(ctx, env, name, env.Args[1:])
	case "version", "--version", "-version":
		fmt.Fprintf(env.Stdout, "bulwark %s\n", versionLine())
		return 0
	default:
		return runCommand(ctx, env, name, env.Args[1:])
	}
}

func runCommand(ctx context.Context, env Env, name string, args []string) int {
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		fs := flag.NewFlagSet("bulwark "+name, flag.ContinueOnError)
		fs.SetOutput(io.Discard) // a mistake gets one line, below; -help the full usage
		run := c.setup(fs, env)
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(env.Stderr, "Usage: bulwark %s [flags]\n\n%s.\n\nEvery flag can also be set by the environment variable shown in brackets.\n\nFlags:\n", name, c.summary)
				printFlags(env.Stderr, fs)
				return 0
			}
			fmt.Fprintf(env.Stderr, "bulwark %s: %v (bulwark help %s lists the flags)\n", name, err, name)
			return 2
		}
		if fs.NArg() > 0 && !c.args {
			fmt.Fprintf(env.Stderr, "bulwark %s: unexpected argument %q\n", name, fs.Arg(0))
			return 2
		}
		if err := run(ctx); err != nil {
			fmt.Fprintf(env.Stderr, "bulwark %s: %v\n", name, err)
			if errors.Is(err, errUsage) {
				return 2
			}
			return 1
		}
		return 0
	}
	fmt.Fprintf(env.Stderr, "bulwark: unknown command %q\n\n", name)
	usage(env.Stderr)
	return 2
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("bulwark serves MCP servers that are safe to hand to an AI model.\n\nUsage:\n  bulwark <server> [flags]   serve over stdio (or --http ADDR)\n  bulwark help <server>      the server's flags\n  bulwark doctor [<server>] [flags]   check the configuration and say what to fix\n  bulwark completion bash|zsh|fish\n  bulwark authz check|schema  test an authorization policy file (docs/authorization.md)\n  bulwark version\n\nServers:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.summary)
	}
	b.WriteString("\nExample: bulwark dns            (local zone store over stdio, no account needed)\n")
	io.WriteString(w, b.String())
}

// printFlags prints the flag defaults spelled --name, as the README and the
// docs write them (Go's flag package accepts -name and --name alike).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	io.WriteString(w, strings.ReplaceAll("\n"+b.String(), "\n  -", "\n  --")[1:])
}
