package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// TestGatewayImportRoundTrip imports a sample configuration of each
// client: the gateway configuration has one upstream a server it can run
// (its command, arguments and env allowlist, no tool on any list), the
// others are named in a warning and stay; without --write the client's
// file is unchanged and the change is printed as a diff; with --write the
// file runs the gateway with the servers' environment, every other key
// kept, the original in a backup; a second import of it is refused.
func TestGatewayImportRoundTrip(t *testing.T) {
	type up struct {
		name, command, url string
		args, env          []string
	}
	for _, c := range []struct {
		from     string
		ups      []up
		kept     []string // entries left in the client's file
		env      map[string]string
		otherKey string // a top-level key that must survive
		warn     []string
	}{
		{from: "claude-desktop", otherKey: "globalShortcut",
			ups: []up{
				{name: "github-server", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-github"}, env: []string{"PATH", "HOME", "GITHUB_PERSONAL_ACCESS_TOKEN"}},
				{name: "filesystem", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"}, env: []string{"PATH", "HOME"}},
			},
			env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example000"}},
		{from: "claude-code",
			ups: []up{
				{name: "everything", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-everything"}, env: []string{"PATH", "HOME"}},
				{name: "remote", url: "https://mcp.example.com/mcp"},
			},
			kept: []string{"authed"}, env: map[string]string{}, warn: []string{`server "authed" not imported (it sends headers`}},
		{from: "cursor",
			ups:  []up{{name: "memory", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-memory"}, env: []string{"PATH", "HOME", "MEMORY_FILE_PATH"}}},
			kept: []string{"local-sse", "workspace"}, env: map[string]string{"MEMORY_FILE_PATH": "/tmp/memory.json"},
			warn: []string{`server "local-sse" not imported (the SSE transport`, `server "workspace" not imported (its command line uses a client variable`}},
		{from: "vscode", otherKey: "inputs",
			ups: []up{
				{name: "fetch", command: "uvx", args: []string{"mcp-server-fetch"}, env: []string{"PATH", "HOME"}},
				{name: "perplexity", command: "npx", args: []string{"-y", "server-perplexity-ask"}, env: []string{"PATH", "HOME", "PERPLEXITY_API_KEY"}},
			},
			kept: []string{"dotenv"}, env: map[string]string{"PERPLEXITY_API_KEY": "${input:api-key}"}, warn: []string{`server "dotenv" not imported (envFile`}},
	} {
		t.Run(c.from, func(t *testing.T) {
			dir := t.TempDir()
			orig, err := os.ReadFile(filepath.Join("testdata", "import", c.from+".json"))
			if err != nil {
				t.Fatal(err)
			}
			file, out := filepath.Join(dir, "client.json"), filepath.Join(dir, "gw.toml")
			if err := os.WriteFile(file, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := run(t, nil, "gateway", "import", "--from", c.from, "--file", file, "--out", out)
			if code != 0 {
				t.Fatalf("import: %d %s", code, stderr)
			}
			for _, w := range c.warn {
				if !strings.Contains(stderr, w) {
					t.Errorf("no warning %q in %s", w, stderr)
				}
			}
			if now, _ := os.ReadFile(file); string(now) != string(orig) {
				t.Fatal("the client's file changed without --write")
			}
			if !strings.Contains(stdout, `+    "bulwark-gateway": {`) || !strings.Contains(stdout, "run again with --write") {
				t.Errorf("no diff printed:\n%s", stdout)
			}
			toml, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := gateway.ParseConfig(toml)
			if err != nil {
				t.Fatalf("%v\n%s", err, toml)
			}
			var got []up
			for _, u := range cfg.Upstreams {
				if len(u.ReadOnlyTools)+len(u.WriteTools)+len(u.AllowTools)+len(u.ConfirmTools) > 0 || u.TrustAnnotations {
					t.Errorf("%s: a tool is listed", u.Name)
				}
				got = append(got, up{u.Name, u.Command, u.URL, u.Args, u.Env})
			}
			if !slices.EqualFunc(got, c.ups, func(a, b up) bool {
				return a.name == b.name && a.command == b.command && a.url == b.url && slices.Equal(a.args, b.args) && slices.Equal(a.env, b.env)
			}) {
				t.Fatalf("upstreams:\n got %+v\nwant %+v", got, c.ups)
			}

			if code, _, stderr := run(t, nil, "gateway", "import", "--from", c.from, "--file", file, "--out", out, "--write", "--bulwark", "/usr/local/bin/bulwark"); code != 0 {
				t.Fatalf("import --write: %d %s", code, stderr)
			}
			if b, _ := os.ReadFile(file + ".bulwark-backup"); string(b) != string(orig) {
				t.Fatal("the backup is not the original")
			}
			var top map[string]json.RawMessage
			raw, _ := os.ReadFile(file)
			if err := json.Unmarshal(raw, &top); err != nil {
				t.Fatal(err)
			}
			if c.otherKey != "" && top[c.otherKey] == nil {
				t.Errorf("%s was lost", c.otherKey)
			}
			key := "mcpServers"
			if c.from == "vscode" {
				key = "servers"
			}
			var servers map[string]struct {
				Type    string            `json:"type"`
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			}
			if err := json.Unmarshal(top[key], &servers); err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range servers {
				names = append(names, n)
			}
			slices.Sort(names)
			if want := append(slices.Clone(c.kept), "bulwark-gateway"); !slices.Equal(names, slices.Sorted(slices.Values(want))) {
				t.Fatalf("servers now: %q", names)
			}
			gw := servers["bulwark-gateway"]
			abs, _ := filepath.Abs(out)
			if gw.Command != "/usr/local/bin/bulwark" || !slices.Equal(gw.Args, []string{"gateway", "--config", abs}) || len(gw.Env) != len(c.env) ||
				(c.from == "vscode") != (gw.Type == "stdio") {
				t.Fatalf("the gateway entry: %+v", gw)
			}
			for k, v := range c.env {
				if gw.Env[k] != v {
					t.Errorf("env %s = %q, want %q", k, gw.Env[k], v)
				}
			}
			if code, _, stderr := run(t, nil, "gateway", "import", "--from", c.from, "--file", file, "--out", out); code != 1 || !strings.Contains(stderr, "already runs") {
				t.Fatalf("a second import: %d %s", code, stderr)
			}
		})
	}
}

// TestGatewayImportRefusals: a variable two servers set to different
// values stays out (the gateway passes one environment); a hostile name
// and command line are written as TOML that reads back as they were.
func TestGatewayImportRefusals(t *testing.T) {
	dir := t.TempDir()
	file, out := filepath.Join(dir, "c.json"), filepath.Join(dir, "gw.toml")
	os.WriteFile(file, []byte(`{"mcpServers":{"a":{"command":"x","env":{"T":"1"}},"b":{"command":"y","env":{"T":"2"}},
		"Evil\"\n[[upstream]]":{"command":"z\"\\\u0001","args":["\"]\nname = \"pwn\""]}}}`), 0o600)
	code, _, stderr := run(t, nil, "gateway", "import", "--from", "cursor", "--file", file, "--out", out)
	if code != 0 || !strings.Contains(stderr, `server "b" not imported (it sets T to another value`) {
		t.Fatalf("%d %s", code, stderr)
	}
	toml, _ := os.ReadFile(out)
	cfg, err := gateway.ParseConfig(toml)
	if err != nil || len(cfg.Upstreams) != 2 {
		t.Fatalf("%v %+v\n%s", err, cfg, toml)
	}
	if u := cfg.Upstreams[0]; u.Name != "evil-upstream" || u.Command != "z\"\\\x01" || u.Args[0] != "\"]\nname = \"pwn\"" {
		t.Fatalf("%+v", u)
	}
	if code, _, _ := run(t, nil, "gateway", "import", "--from", "emacs", "--file", file); code != 2 {
		t.Fatalf("an unknown client: %d", code)
	}
}
