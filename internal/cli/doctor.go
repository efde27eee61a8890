package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/cli/bootenv"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// doctor is `bulwark doctor [server] [flags]`: it builds the server exactly
// as `bulwark <server>` would (the same flags, environment, validation,
// provider, Redis ping), then, instead of serving, checks what a first call
// would need: credentials present (never printed), the upstream reachable
// with them (one read-only tool called in process), the data directory
// writable, the ports free. It prints one line per check and what to fix.

// probes names the read-only tool doctor calls to reach each server's
// upstream.
var probes = map[string]probeCall{
	"dns":     {"list_zones", map[string]any{}},
	"rustpad": {"get_stats", map[string]any{}},
	"vdb":     {"vdb_catalog", map[string]any{"kind": "summary"}},
}

// probeCall is a read-only tool call that reaches the upstream.
type probeCall struct {
	tool string
	args map[string]any
}

type finding struct {
	ok          bool
	check, note string
	fix         string
}

// doctorRun collects the findings of one server's check.
type doctorRun struct {
	server   string
	mu       sync.Mutex
	findings []finding
	seen     map[string]bool // secret variables read, and whether set
	log      *syncBuf
	dnsPort  *finding // the responder's port, reported for the local provider
}

func (d *doctorRun) add(f finding) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.findings = append(d.findings, f)
}

func runDoctor(ctx context.Context, env Env, args []string) int {
	names := []string{}
	switch {
	case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
		names, args = args[:1], args[1:]
	case len(args) > 0:
		fmt.Fprintln(env.Stderr, "bulwark doctor: name the server the flags are for, e.g. bulwark doctor dns -data-dir DIR")
		return 2
	default:
		for _, c := range commands() {
			getenv := env.Getenv
			if getenv == nil {
				getenv = func(string) string { return "" }
			}
			if c.needs != "" && getenv(c.needs) == "" {
				fmt.Fprintf(env.Stdout, "bulwark doctor %s: skipped (%s is not set; bulwark doctor %s checks it anyway)\n", c.name, c.needs, c.name)
				continue
			}
			if c.unconfigured != nil {
				if why := c.unconfigured(getenv); why != "" {
					fmt.Fprintf(env.Stdout, "bulwark doctor %s: skipped (%s; bulwark doctor %s checks it anyway)\n", c.name, why, c.name)
					continue
				}
			}
			names = append(names, c.name)
		}
	}
	failed := false
	for _, name := range names {
		c, ok := lookupCommand(name)
		if !ok {
			fmt.Fprintf(env.Stderr, "bulwark doctor: unknown server %q\n", name)
			return 2
		}
		d := &doctorRun{server: name, seen: map[string]bool{}, log: &syncBuf{}}
		d.check(ctx, c, env, args)
		if d.report(env.Stdout) {
			failed = true
		}
	}
	if failed {
		return 1
	}
	return 0
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// report prints the findings and says whether any failed.
func (d *doctorRun) report(w io.Writer) bool {
	fmt.Fprintf(w, "bulwark doctor %s\n", d.server)
	failed := false
	for _, f := range d.findings {
		mark := "ok  "
		if !f.ok {
			mark, failed = "FAIL", true
		}
		line := fmt.Sprintf("  %s  %s", mark, f.check)
		if f.note != "" {
			line += ": " + f.note
		}
		fmt.Fprintln(w, oneLine(line))
		if !f.ok && f.fix != "" {
			fmt.Fprintln(w, oneLine("        fix: "+f.fix))
		}
	}
	return failed
}

// oneLine keeps a line printable: line breaks and tabs (an upstream's
// error text has "\nHint: …") become spaces, any other control character
// is shown escaped, and it is cut at 300 bytes, at a word's end.
func oneLine(s string) string {
	s = lineBreaks.Replace(s)
	s = untrusted.TerminalLine(s) // a check's detail may quote an upstream or a file
	if len(s) > 300 {
		cut := untrusted.CutIndex(s, 300)
		if sp := strings.LastIndexByte(s[:cut], ' '); sp > cut-40 {
			cut = sp // at a word's end
		}
		s = s[:cut] + "…"
	}
	return s
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")

func (d *doctorRun) check(ctx context.Context, c command, env Env, args []string) {
	fs := flag.NewFlagSet("bulwark doctor "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	denv := env
	denv.Getenv = d.recordSecrets(env.Getenv)
	denv.Stderr = d.log
	denv.doctor = d
	run := c.setup(fs, denv)
	if err := fs.Parse(args); err != nil {
		d.add(finding{check: "flags", note: err.Error(), fix: "see bulwark help " + c.name})
		return
	}
	d.credentials(fs)
	d.portsFree(fs)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := run(ctx)
	switch {
	case errors.Is(err, errDoctorDone):
	case err != nil:
		fix := "see bulwark help " + c.name
		if errors.Is(err, errUsage) {
			fix = "change the setting named above"
		}
		d.add(finding{check: "starts", note: err.Error(), fix: fix})
	}
}

// recordSecrets wraps getenv to note which secret variables the server
// reads and whether they are set, never their values.
func (d *doctorRun) recordSecrets(getenv func(string) string) func(string) string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return func(name string) string {
		v := getenv(name)
		if bootenv.IsSecret(name) {
			d.mu.Lock()
			d.seen[name] = d.seen[name] || v != ""
			d.mu.Unlock()
		}
		return v
	}
}

func (d *doctorRun) credentials(fs *flag.FlagSet) {
	files := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		if strings.HasSuffix(f.Name, "-file") {
			files[f.Name] = true
		}
	})
	var set, unset []string
	for _, name := range bootenv.Secrets {
		isSet, read := d.seen[name]
		if !read {
			continue
		}
		for f := range files {
			if strings.Contains(fs.Lookup(f).Usage, "["+name+"]") {
				isSet, name = true, name+" (from -"+f+")"
			}
		}
		if isSet {
			set = append(set, name)
		} else {
			unset = append(unset, name)
		}
	}
	note := "none set"
	if len(set) > 0 {
		note = strings.Join(set, ", ") + " set (values not shown)"
	}
	if len(unset) > 0 {
		note += "; not set: " + strings.Join(unset, ", ")
	}
	d.add(finding{ok: true, check: "secret variables", note: note})
}

// portsFree checks the listening addresses before the server would bind
// them, and turns the DNS responder off for the check itself.
func (d *doctorRun) portsFree(fs *flag.FlagSet) {
	if f := fs.Lookup("dns-listen"); f != nil && f.Value.String() != "off" {
		addr := f.Value.String()
		// Reported once the provider is known: only the local one has a
		// responder.
		if err := listenBoth(addr); err != nil {
			d.dnsPort = &finding{check: "DNS responder port", note: err.Error(), fix: "choose another address with -dns-listen, or -dns-listen off (the tools work without the responder)"}
		} else {
			d.dnsPort = &finding{ok: true, check: "DNS responder port", note: addr + " is free"}
		}
		_ = fs.Set("dns-listen", "off")
	}
}

func listenBoth(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ln.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	return pc.Close()
}

// errDoctorDone ends a doctor run where the server would start serving.
var errDoctorDone = errors.New("doctor: checked")

// doctorServe runs in place of serving: the server is built as it would
// be, so it checks what serving needs.
func (d *doctorRun) serve(ctx context.Context, s *serving, srv *kernel.Server) error {
	d.add(finding{ok: true, check: "starts", note: "the configuration is valid"})
	if s.redisURL.set() {
		d.add(finding{ok: true, check: "shared state", note: "Redis answered"})
	}
	if d.dnsPort != nil && logValue(d.log.String(), "provider") == "local" {
		d.add(*d.dnsPort)
	}
	if dir := logValue(d.log.String(), "data_dir"); dir != "" {
		d.dataDir(dir)
	}
	if s.http != "" {
		if _, err := s.httpOptions(); err != nil {
			d.add(finding{check: "HTTP", note: err.Error(), fix: "change the setting named above"})
		}
		if addr, err := httpAddr(s.http); err == nil {
			if ln, err := net.Listen("tcp", addr); err != nil {
				d.add(finding{check: "HTTP port", note: err.Error(), fix: "choose another address with -http"})
			} else {
				ln.Close()
				d.add(finding{ok: true, check: "HTTP port", note: addr + " is free"})
			}
		}
	}
	d.probe(ctx, s, srv)
	return errDoctorDone
}

func (d *doctorRun) dataDir(dir string) {
	f, err := os.CreateTemp(dir, ".bulwark-doctor-*")
	if err != nil {
		d.add(finding{check: "data directory", note: dir + " is not writable", fix: "make it writable by this user, or choose another with -data-dir"})
		return
	}
	f.Close()
	os.Remove(f.Name())
	d.add(finding{ok: true, check: "data directory", note: dir + " is writable"})
}

// probe calls the server's read-only probe tool in process.
func (d *doctorRun) probe(ctx context.Context, s *serving, srv *kernel.Server) {
	p, ok := probes[d.server]
	if !ok {
		d.add(finding{ok: true, check: "upstream", note: "not checked: no probe for " + d.server})
		return
	}
	tool := p.tool
	if s.byok && s.http != "" {
		d.add(finding{ok: true, check: "upstream", note: "not checked: with -byok each request brings its own credentials"})
		return
	}
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, sr, sw) }()
	defer func() { cw.Close(); cancel(); <-done }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bulwark-doctor"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		d.add(finding{check: "MCP session", note: err.Error()})
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: p.args})
	switch {
	case err != nil && strings.Contains(err.Error(), "unknown tool"):
		d.add(finding{ok: true, check: "upstream", note: "not checked: " + tool + " is not served (-allow-tools / -deny-tools)"})
	case err != nil:
		d.add(finding{check: "upstream", note: err.Error()})
	case res.IsError:
		d.add(finding{check: "upstream", note: tool + " failed: " + resultText(res), fix: "check the credentials and the upstream's address"})
	default:
		d.add(finding{ok: true, check: "upstream", note: tool + " answered"})
	}
}

func resultText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// logValue finds key=value in slog text output (the server's startup line).
func logValue(log, key string) string {
	i := strings.Index(log, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := log[i+len(key)+2:]
	if j := strings.IndexAny(v, " \n"); j >= 0 {
		v = v[:j]
	}
	return strings.Trim(v, `"`)
}

// syncBuf is a buffer the server's logger writes while doctor reads it.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
