package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// FuzzPlanImport: whatever a client's configuration file holds — names,
// commands, arguments and environment values with quotes, newlines,
// backslashes, control and invisible characters — planning the import
// never panics and never writes a gateway configuration that does not read
// back with the same upstreams (the TOML writer escapes everything), and
// the client's new file is JSON that names the gateway. Seeds:
// testdata/fuzz/FuzzPlanImport.
func FuzzPlanImport(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"],"env":{"A":"b"}}}}`,
		`{"mcpServers":{"a\"b\n[x]":{"command":"c\\d\u0000","args":["'''","\"\"\"","\u202e"],"env":{"K=V":"\n"}}}}`,
		`{"servers":{"s":{"type":"stdio","command":"x"},"h":{"type":"http","url":"http://127.0.0.1:1/mcp"}}}`,
		`{"mcpServers":{"x":{"command":"a","envFile":".env"},"y":{"url":"https://e.example/mcp","headers":{"Authorization":"Bearer t"}}}}`,
		`[]`, `{"mcpServers":[]}`, `{"mcpServers":{"bulwark-gateway":{}}}`,
		`{"globalShortcut":"x","mcpServers":{"fs":{"command":"npx"}},"servers":{"s":{"command":"y"}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		for _, from := range []string{"claude-desktop", "vscode"} {
			cf := clientFormats[from]
			im := &gatewayImport{from: from, file: "client.json", out: "gateway.toml", bulwark: "/usr/local/bin/bulwark"}
			p, err := planImport(cf, []byte(doc), im)
			if err != nil {
				if strings.Contains(err.Error(), "does not read back") {
					t.Fatalf("%s: %v\n%s", from, err, doc)
				}
				continue
			}
			back, err := gateway.ParseConfig(p.toml)
			if err != nil || len(back.Upstreams) != len(p.names) {
				t.Fatalf("%s: the configuration does not read back: %v\n%s", from, err, p.toml)
			}
			var top map[string]json.RawMessage
			var servers map[string]json.RawMessage
			if err := json.Unmarshal(p.client, &top); err != nil {
				t.Fatalf("%s: the client's file: %v\n%s", from, err, p.client)
			}
			if err := json.Unmarshal(top[cf.key], &servers); err != nil || servers[gatewayEntry] == nil {
				t.Fatalf("%s: the client's file names no gateway: %v\n%s", from, err, p.client)
			}
		}
	})
}
