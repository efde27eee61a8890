package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/authdns"
)

const (
	tsigSecret = "aDuN3MJK7Ptz0Q0lQbbBv2Dq0vQ2E+JtG0M8q3Xk1sE="
	tsigFile   = `key "bulwark-cli." {
	algorithm hmac-sha256;
	secret "` + tsigSecret + `";
};
`
	cliZone = `example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 1 3600 600 86400 300
example.com. 3600 IN NS ns1.example.com.
www.example.com. 300 IN A 198.51.100.1
evil.example.com. 300 IN TXT "` + tsigSecret + `"
`
)

// TestDNSRFC2136 runs `bulwark dns -provider rfc2136` against the fake
// server: the key comes from the environment, is read once and removed,
// never reaches a log or a result (a record that holds it is scrubbed),
// and only the tools the protocol serves are listed.
func TestDNSRFC2136(t *testing.T) {
	srv := authdns.Start(t, authdns.Options{Keys: map[string]string{"bulwark-cli.": tsigSecret}})
	if err := srv.AddZone(cliZone); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"BULWARK_DNS_TSIG_KEY": tsigFile}
	cs, env, stderr := session(t, vars, "-provider", "rfc2136", "-dns-server", srv.Addr(), "-zones", "example.com")
	if env.Getenv("BULWARK_DNS_TSIG_KEY") != "" {
		t.Fatal("BULWARK_DNS_TSIG_KEY is still in the environment")
	}
	names := listToolNames(t, cs)
	if slices.Contains(names, "create_zone") || slices.Contains(names, "update_records") || !slices.Contains(names, "set_records") || len(names) != 11 {
		t.Fatalf("tools %v", names)
	}
	out := call(t, cs, "get_rrset", map[string]any{"zone": "example.com", "name": "www", "type": "A"})
	if !strings.Contains(out, "198.51.100.1") {
		t.Fatalf("get_rrset: %s", out)
	}
	out = call(t, cs, "export_zonefile", map[string]any{"zone": "example.com"})
	if strings.Contains(out, tsigSecret) || !strings.Contains(out, "evil.example.com") {
		t.Fatalf("the secret reached a result, or the record is missing: %s", out)
	}
	call(t, cs, "add_records", map[string]any{"zone": "example.com", "name": "api", "type": "A", "records": []any{map[string]any{"value": "198.51.100.9"}}})
	if len(srv.Records("api.example.com.", 1)) != 1 {
		t.Fatal("the change did not reach the server")
	}
	log := stderr.String()
	if !strings.Contains(log, "provider=rfc2136") || !strings.Contains(log, "bulwark-cli") || strings.Contains(log, tsigSecret) {
		t.Fatalf("log: %s", log)
	}
}

// TestDNSRFC2136Refusals: what rfc2136 needs, missing or wrong, stops
// startup with a line that says what to set, never the secret.
func TestDNSRFC2136Refusals(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "tsig.key")
	two := filepath.Join(dir, "two.key")
	weak := filepath.Join(dir, "weak.key")
	for f, text := range map[string]string{keyFile: tsigFile, two: tsigFile + strings.Replace(tsigFile, "bulwark-cli", "other", 1),
		weak: "hmac-md5:k:" + tsigSecret} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no server", []string{"-provider", "rfc2136", "-zones", "example.com", "-tsig-key-file", keyFile}, "-dns-server"},
		{"no zones", []string{"-provider", "rfc2136", "-dns-server", "127.0.0.1:53", "-tsig-key-file", keyFile}, "-zones"},
		{"no key", []string{"-provider", "rfc2136", "-dns-server", "127.0.0.1:53", "-zones", "example.com"}, "tsig-keygen"},
		{"two keys", []string{"-dns-server", "127.0.0.1:53", "-zones", "example.com", "-tsig-key-file", two}, "-tsig-key"},
		{"unknown key", []string{"-dns-server", "127.0.0.1:53", "-zones", "example.com", "-tsig-key-file", two, "-tsig-key", "nobody"}, "nobody"},
		{"weak key", []string{"-dns-server", "127.0.0.1:53", "-zones", "example.com", "-tsig-key-file", weak}, "hmac-sha256 or hmac-sha512"},
		{"bad zone", []string{"-dns-server", "127.0.0.1:53", "-zones", "a..b", "-tsig-key-file", keyFile}, "a..b"},
		{"byok", []string{"-provider", "rfc2136", "-http", "127.0.0.1:0", "-byok", "-dns-server", "127.0.0.1:53", "-zones", "example.com", "-tsig-key-file", keyFile}, "-byok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := run(t, nil, append([]string{"dns"}, c.args...)...)
			if code != 2 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, tsigSecret) {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
		})
	}
}

// TestHelpNamesProviderTools: help dns says which tools each provider
// serves.
func TestHelpNamesProviderTools(t *testing.T) {
	code, out, _ := run(t, nil, "help", "dns")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"hetzner, local or rfc2136", "hetzner and local serve all 23 tools",
		"rfc2136 serves 11: list_zones get_zone export_zonefile list_rrsets get_rrset create_rrset delete_rrset set_records add_records remove_records change_rrset_ttl",
		"-dns-server", "-zones", "-tsig-key-file", "[BULWARK_DNS_TSIG_KEY]"} {
		if !strings.Contains(out, want) {
			t.Errorf("help dns lacks %q:\n%s", want, out)
		}
	}
}
