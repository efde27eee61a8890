package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/atomicfile"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
	"github.com/bulwarkmcp/bulwark/servers/gateway/pin"
)

// `bulwark gateway import --from CLIENT [--file PATH] [--out FILE] [--write]`
// reads the MCP servers a client already runs (the configuration file each
// client documents), writes a gateway configuration with one upstream a
// server — its command, arguments and the names of its environment
// variables as the env allowlist, every tool on no list, so every call is
// confirmed until the operator lists its read-only and write tools — and
// prints the change to the client's file that runs them all through one
// `bulwark gateway`. With --write it makes that change, after a backup.

// clientFormat is where a client keeps its servers, and how.
type clientFormat struct {
	key   string                                  // "mcpServers", or "servers" (VS Code)
	path  func(getenv func(string) string) string // the documented file
	entry func(cmd string, args []string, env map[string]string) map[string]any
}

func stdioEntry(cmd string, args []string, env map[string]string) map[string]any {
	return map[string]any{"command": cmd, "args": args, "env": env}
}

var clientFormats = map[string]clientFormat{
	// claude_desktop_config.json: macOS, Windows; Linux builds use ~/.config
	"claude-desktop": {key: "mcpServers", entry: stdioEntry, path: func(getenv func(string) string) string {
		switch runtime.GOOS {
		case "darwin":
			return filepath.Join(getenv("HOME"), "Library", "Application Support", "Claude", "claude_desktop_config.json")
		case "windows":
			return filepath.Join(getenv("APPDATA"), "Claude", "claude_desktop_config.json")
		}
		return filepath.Join(getenv("HOME"), ".config", "Claude", "claude_desktop_config.json")
	}},
	// Claude Code's project scope: .mcp.json in the project
	"claude-code": {key: "mcpServers", entry: stdioEntry, path: func(func(string) string) string { return ".mcp.json" }},
	// Cursor's global file (a project's is .cursor/mcp.json: give --file)
	"cursor": {key: "mcpServers", entry: stdioEntry, path: func(getenv func(string) string) string {
		return filepath.Join(getenv("HOME"), ".cursor", "mcp.json")
	}},
	// VS Code's workspace file
	"vscode": {key: "servers", path: func(func(string) string) string { return filepath.Join(".vscode", "mcp.json") },
		entry: func(cmd string, args []string, env map[string]string) map[string]any {
			return map[string]any{"type": "stdio", "command": cmd, "args": args, "env": env}
		}},
}

// importedServer is one client entry, as the gateway can run it.
type importedServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	EnvFile string            `json:"envFile"`
}

// gatewayEntry is the name of the client entry that runs the gateway.
const gatewayEntry = "bulwark-gateway"

type gatewayImport struct {
	from, file, out, bulwark string
	write                    bool
}

func runGatewayImport(_ context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("bulwark gateway import", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var im gatewayImport
	fs.StringVar(&im.from, "from", "", "the client whose servers to import: claude-desktop, claude-code, cursor or vscode")
	fs.StringVar(&im.file, "file", "", "the client's configuration `FILE` (default: the file the client documents)")
	fs.StringVar(&im.out, "out", "bulwark-gateway.toml", "the gateway configuration `FILE` to write")
	fs.StringVar(&im.bulwark, "bulwark", "bulwark", "the bulwark `COMMAND` the client runs")
	fs.BoolVar(&im.write, "write", false, "rewrite the client's file to run its servers through the gateway (a backup is kept)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(env.Stderr, "Usage: bulwark gateway import --from CLIENT [flags]\n\nReads a client's MCP servers, writes a gateway configuration with one upstream a server,\nand shows (or, with --write, makes) the change that runs them through bulwark gateway.\n\nFlags:\n")
			printFlags(env.Stderr, fs)
			return 0
		}
		fmt.Fprintf(env.Stderr, "bulwark gateway import: %v (bulwark gateway import -help lists the flags)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "bulwark gateway import: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if err := im.run(env); err != nil {
		fmt.Fprintf(env.Stderr, "bulwark gateway import: %v\n", err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func (im *gatewayImport) run(env Env) error {
	cf, ok := clientFormats[im.from]
	if !ok {
		return fmt.Errorf("%w: --from must be claude-desktop, claude-code, cursor or vscode", errUsage)
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if im.file == "" {
		im.file = cf.path(getenv)
	}
	orig, err := os.ReadFile(im.file)
	if err != nil {
		return fmt.Errorf("reading %s: %v", im.file, unwrapPath(err))
	}
	plan, err := planImport(cf, orig, im)
	if err != nil {
		return fmt.Errorf("%s: %w", im.file, err)
	}
	for _, w := range plan.warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", untrusted.TerminalLine(w))
	}
	if err := atomicfile.Write(im.out, plan.toml, 0o600, nil); err != nil {
		return fmt.Errorf("writing %s: %v", im.out, unwrapPath(err))
	}
	fmt.Fprintf(env.Stdout, "Wrote %s: %d upstream(s). Every tool is on no list, so every call is confirmed until you list its read_only_tools and write_tools.\n", im.out, len(plan.names))
	fmt.Fprint(env.Stdout, untrusted.TerminalText(string(pin.UnifiedDiff(im.file, orig, im.file, plan.client))))
	if !im.write {
		fmt.Fprintf(env.Stdout, "Nothing changed in %s; run again with --write to make the change above (a backup is kept).\n", im.file)
		return nil
	}
	backup := im.file + ".bulwark-backup"
	if err := atomicfile.Write(backup, orig, 0o600, nil); err != nil {
		return fmt.Errorf("writing the backup %s: %v", backup, unwrapPath(err))
	}
	if err := atomicfile.Write(im.file, plan.client, 0o600, nil); err != nil {
		return fmt.Errorf("writing %s: %v", im.file, unwrapPath(err))
	}
	fmt.Fprintf(env.Stdout, "Rewrote %s (backup: %s). Restart the client.\n", im.file, backup)
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// importPlan is what an import writes: the gateway configuration, the
// client's file as it would be, and what could not be imported.
type importPlan struct {
	toml, client []byte
	names        []string
	warnings     []string
}

// planImport reads the client's file and plans the import. Entries the
// gateway cannot run as they are (a URL with headers, an env file, a
// client variable in the command line) stay in the client's file, with a
// warning; an entry that already runs the gateway is left alone.
func planImport(cf clientFormat, orig []byte, im *gatewayImport) (*importPlan, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(orig, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	var servers map[string]json.RawMessage
	if raw, ok := top[cf.key]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, fmt.Errorf("%q is not an object: %v", cf.key, err)
		}
	}
	if _, ok := servers[gatewayEntry]; ok {
		return nil, fmt.Errorf("it already runs %q: import it before, from its backup", gatewayEntry)
	}
	p := &importPlan{}
	keep := map[string]json.RawMessage{}
	var ups []gateway.Upstream
	envAll := map[string]string{}
	taken := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		var s importedServer
		if err := json.Unmarshal(servers[name], &s); err != nil {
			return nil, fmt.Errorf("server %q: %v", name, err)
		}
		u, why := upstreamOf(name, &s, taken)
		if why == "" {
			why = mergeEnv(envAll, s.Env)
		}
		if why != "" {
			p.warnings = append(p.warnings, fmt.Sprintf("server %q not imported (%s); it stays as it is", name, why))
			keep[name] = servers[name]
			continue
		}
		taken[u.Name] = true
		ups = append(ups, u)
		p.names = append(p.names, name)
	}
	if len(ups) == 0 {
		return nil, errors.New("no server to import")
	}
	cfg := gateway.Config{Upstreams: ups}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p.toml = gatewayTOML(im.from, im.file, ups)
	if back, err := gateway.ParseConfig(p.toml); err != nil || len(back.Upstreams) != len(ups) {
		return nil, fmt.Errorf("the configuration written does not read back (%v): please report it", err)
	}
	abs, err := filepath.Abs(im.out)
	if err != nil {
		return nil, err
	}
	entry, err := json.Marshal(cf.entry(im.bulwark, []string{"gateway", "--config", abs}, envAll))
	if err != nil {
		return nil, err
	}
	keep[gatewayEntry] = entry
	if top[cf.key], err = json.Marshal(keep); err != nil {
		return nil, err
	}
	if p.client, err = json.MarshalIndent(top, "", "  "); err != nil {
		return nil, err
	}
	p.client = append(p.client, '\n')
	return p, nil
}

var upstreamNameRE = regexp.MustCompile(`[^a-z0-9_-]+`)

// upstreamOf is the gateway upstream of a client entry, or why there is
// none.
func upstreamOf(name string, s *importedServer, taken map[string]bool) (gateway.Upstream, string) {
	switch {
	case s.EnvFile != "":
		return gateway.Upstream{}, "envFile: give the gateway those variables yourself"
	case len(s.Headers) > 0:
		return gateway.Upstream{}, "it sends headers, which may hold a credential: give the gateway a credential_file for it"
	case s.Type == "sse":
		return gateway.Upstream{}, "the SSE transport: the gateway reaches remote servers over Streamable HTTP"
	case s.Command == "" && s.URL == "":
		return gateway.Upstream{}, "neither a command nor a URL"
	}
	for _, a := range append([]string{s.Command, s.URL}, s.Args...) {
		if strings.Contains(a, "${") {
			return gateway.Upstream{}, "its command line uses a client variable (${…}), which the gateway does not expand"
		}
	}
	un := strings.Trim(upstreamNameRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(un) > 28 {
		un = un[:28]
	}
	if un == "" {
		un = "server"
	}
	for i, base := 2, un; taken[un]; i++ {
		un = fmt.Sprintf("%s-%d", base, i)
	}
	u := gateway.Upstream{Name: un, Command: s.Command, Args: s.Args, URL: s.URL}
	if s.Command != "" {
		u.Env = []string{"PATH", "HOME"}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			if !slices.Contains(u.Env, k) {
				u.Env = append(u.Env, k)
			}
		}
	}
	return u, ""
}

// mergeEnv adds env to all, unless a variable is set to two values.
func mergeEnv(all, env map[string]string) string {
	for k, v := range env {
		if old, ok := all[k]; ok && old != v {
			return fmt.Sprintf("it sets %s to another value than a server imported before, and the gateway passes one environment", k)
		}
	}
	for k, v := range env {
		all[k] = v
	}
	return ""
}

// gatewayTOML writes the configuration, one [[upstream]] a server.
func gatewayTOML(from, file string, ups []gateway.Upstream) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by `bulwark gateway import --from %s` from %s.\n", from, tomlComment(file))
	b.WriteString("# No tool is on a list yet, so every tool is destructive: every call needs confirmation\n" +
		"# until you list the read-only ones (read_only_tools) and those that only write (write_tools).\n")
	for _, u := range ups {
		b.WriteString("\n[[upstream]]\n")
		fmt.Fprintf(&b, "name = %s\n", tomlString(u.Name))
		if u.URL != "" {
			fmt.Fprintf(&b, "url = %s\n", tomlString(u.URL))
			continue
		}
		fmt.Fprintf(&b, "command = %s\n", tomlString(u.Command))
		fmt.Fprintf(&b, "args = %s\n", tomlList(u.Args))
		fmt.Fprintf(&b, "env = %s\n", tomlList(u.Env))
	}
	return b.Bytes()
}

func tomlComment(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(untrusted.TerminalLine(s))
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = tomlString(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
