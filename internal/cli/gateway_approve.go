package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/servers/gateway/pin"
)

// gatewayApprove is `bulwark gateway approve`: the flags and what they
// resolve to.
type gatewayApprove struct {
	config, pins, dataDir string
	redisConn             // redis.go
	yes                   bool
}

// approveFlagSet is the flag set of `bulwark gateway approve`, into a;
// completion lists its flags too.
func approveFlagSet(env Env, a *gatewayApprove) (*flag.FlagSet, *flags) {
	fs := flag.NewFlagSet("bulwark gateway approve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := newFlags(fs, env)
	f.String(&a.config, "config", "BULWARK_GATEWAY_CONFIG", "", "the gateway's configuration `FILE`: whose pins to approve")
	f.String(&a.dataDir, "data-dir", "BULWARK_GATEWAY_DATA_DIR", "", "the gateway's data directory (default $XDG_DATA_HOME/bulwark/gateway or ~/.local/share/bulwark/gateway)")
	fs.StringVar(&a.pins, "pins", "", "the pin `FILE` itself, instead of -config")
	fs.BoolVar(&a.yes, "yes", false, "approve every definition shown without asking")
	a.registerRedis(f, "the pins of gateways that keep them in a shared Redis (with -config)", false)
	return fs, f
}

// runGatewayApprove is `bulwark gateway approve [flags] [UPSTREAM[.TOOL]]`:
// it shows each tool definition waiting for approval — new, changed or
// renamed — as a diff against its pin with the description scan's
// findings, and pins the ones the person confirms (all of them with
// -yes). The gateway dispatches `approve` here.
func runGatewayApprove(ctx context.Context, env Env, args []string) int {
	var a gatewayApprove
	fs, f := approveFlagSet(env, &a)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(env.Stderr, "Usage: bulwark gateway approve [flags] [UPSTREAM[.TOOL]]\n\nShows each tool definition the gateway hid — new, changed or renamed — as a diff\nagainst its pin with the description scan's findings, and pins what you confirm.\n\nFlags:\n")
			printFlags(env.Stderr, fs)
			return 0
		}
		fmt.Fprintf(env.Stderr, "bulwark gateway approve: %v (bulwark gateway approve -help lists the flags)\n", err)
		return 2
	}
	if len(f.errs) > 0 || fs.NArg() > 1 {
		fmt.Fprintf(env.Stderr, "bulwark gateway approve: %v\n", errors.Join(append(f.errs, extraArgs(fs.Args()))...))
		return 2
	}
	if err := a.run(ctx, env, fs.Arg(0)); err != nil {
		fmt.Fprintf(env.Stderr, "bulwark gateway approve: %v\n", err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func extraArgs(args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("one UPSTREAM[.TOOL] at most, not %q", args)
	}
	return nil
}

func (a *gatewayApprove) run(ctx context.Context, env Env, target string) error {
	st, path, closeStore, err := a.open(env)
	if err != nil {
		return err
	}
	defer closeStore()
	upstream, tool, _ := strings.Cut(target, ".")
	list, err := st.Pending(ctx, upstream, tool)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(env.Stdout, "Nothing waits for approval in %s.\n", path)
		return nil
	}
	names, err := st.ToolNames(ctx)
	if err != nil {
		return err
	}
	in := bufio.NewReader(stdinOf(env))
	approved := 0
	for _, p := range list {
		findings, err := pin.Scan(p.New.Definition, &pin.ScanOptions{ToolNames: names})
		if err != nil {
			return err
		}
		var report strings.Builder
		if err := pin.WriteReport(&report, p, findings); err != nil {
			return err
		}
		// the report quotes what an upstream wrote: no control or hidden
		// character of it reaches the operator's terminal
		fmt.Fprint(env.Stdout, untrusted.TerminalText(report.String()))
		if !a.yes && !askApproval(env.Stdout, in, untrusted.TerminalLine(p.Upstream+"."+p.Tool)) {
			fmt.Fprint(env.Stdout, "Skipped.\n\n")
			continue
		}
		if err := st.Approve(ctx, p.Upstream, p.Tool, p.New.Hash); err != nil {
			return err
		}
		approved++
		fmt.Fprintf(env.Stdout, "Approved: pinned sha256:%s.\n\n", p.New.Hash)
	}
	fmt.Fprintf(env.Stdout, "%d of %d approved. The gateway shows an approved tool when it next lists its upstream's tools.\n", approved, len(list))
	return nil
}

// askApproval asks on w and reads a line; only y or yes approves.
func askApproval(w io.Writer, in *bufio.Reader, what string) bool {
	fmt.Fprintf(w, "Approve %s? [y/N] ", what)
	line, _ := in.ReadString('\n')
	ans := strings.ToLower(strings.TrimSpace(line))
	return ans == "y" || ans == "yes"
}

func stdinOf(env Env) io.Reader {
	if env.Stdin == nil {
		return strings.NewReader("")
	}
	return env.Stdin
}

// open opens the pin store: the gateway's Redis key (-redis-url-file,
// with -config), or its pin file (pinPath). where names it for messages.
func (a *gatewayApprove) open(env Env) (st *pin.Store, where string, closeStore func(), err error) {
	opts := &pin.Options{Logger: slog.New(slog.DiscardHandler)}
	if a.redisURL.set() || a.redisPassword.set() {
		if a.config == "" {
			return nil, "", nil, fmt.Errorf("%w: -redis-url-file needs -config FILE: whose pins to approve", errUsage)
		}
		abs, err := filepath.Abs(a.config)
		if err != nil {
			return nil, "", nil, err
		}
		if _, err := a.connectRedis(slog.New(slog.DiscardHandler)); err != nil {
			return nil, "", nil, err
		}
		closeStore = func() { _ = a.redisClient.Close() }
		if st, err = redisPins(a.redisClient, abs, opts); err != nil {
			closeStore()
			return nil, "", nil, err
		}
		return st, "the shared Redis", closeStore, nil
	}
	path, err := a.pinPath(env)
	if err != nil {
		return nil, "", nil, err
	}
	st, err = pin.Open(path, opts)
	return st, path, func() {}, err
}

// pinPath is the pin file: -pins; or the file of -config in the data
// directory; or the only pin file there.
func (a *gatewayApprove) pinPath(env Env) (string, error) {
	if a.pins != "" {
		if a.config != "" {
			return "", fmt.Errorf("%w: give -config or -pins, not both", errUsage)
		}
		return a.pins, nil
	}
	dir := gatewayDataDir(a.dataDir, env)
	if dir == "" {
		return "", fmt.Errorf("%w: no data directory: set -data-dir (HOME is not set)", errUsage)
	}
	if a.config != "" {
		abs, err := filepath.Abs(a.config)
		if err != nil {
			return "", err
		}
		return pin.PathFor(dir, abs)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*"+pin.FileSuffix))
	if err != nil {
		return "", err
	}
	switch len(files) {
	case 0:
		return "", fmt.Errorf("no pin file in %s: has the gateway run with this data directory?", dir)
	case 1:
		return files[0], nil
	}
	return "", fmt.Errorf("%w: %d pin files in %s: say which gateway with -config FILE (or -pins FILE)", errUsage, len(files), dir)
}
