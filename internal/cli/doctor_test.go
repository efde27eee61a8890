package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
)

// One row per broken configuration: doctor names what is wrong, says how
// to fix it, exits 1, and never prints a secret.
func TestDoctorBrokenConfigurations(t *testing.T) {
	api := hetznerapi.Start(t, &hetznerapi.Options{Token: "good-s3cr3t-token"})
	takenTCP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer takenTCP.Close()
	takenUDP, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer takenUDP.Close()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		vars map[string]string
		args []string
		want []string // lines that must appear, in order of the report
	}{
		{"bad boolean", map[string]string{"HETZNER_READ_ONLY": "maybe"}, []string{"dns"},
			[]string{"FAIL  starts", "HETZNER_READ_ONLY", "fix: "}},
		{"hetzner without a token", nil, []string{"dns", "-provider", "hetzner"},
			[]string{"not set: HETZNER_API_TOKEN", "FAIL  starts", "needs HETZNER_API_TOKEN"}},
		{"token the upstream refuses", map[string]string{"HETZNER_API_TOKEN": "wrong-s3cr3t", "HETZNER_API_BASE_URL": api.URL()}, []string{"dns"},
			[]string{"HETZNER_API_TOKEN, HETZNER_API_BASE_URL set (values not shown)", "ok    starts", "FAIL  upstream: list_zones failed", "fix: check the credentials"}},
		{"upstream unreachable", map[string]string{"HETZNER_API_TOKEN": "good-s3cr3t-token", "HETZNER_API_BASE_URL": "http://127.0.0.1:1/v1"}, []string{"dns"},
			[]string{"FAIL  upstream: list_zones failed"}},
		{"data directory is a file", nil, []string{"dns", "-dns-listen", "off", "-data-dir", file + "/zones"},
			[]string{"FAIL  starts"}},
		{"DNS port taken", nil, []string{"dns", "-data-dir", "DIR", "-dns-listen", takenUDP.LocalAddr().String()},
			[]string{"ok    starts", "FAIL  DNS responder port", "fix: choose another address with -dns-listen"}},
		{"flags without a server", nil, []string{"-data-dir", "DIR"}, nil},
		{"HTTP port taken", nil, []string{"dns", "-data-dir", "DIR", "-dns-listen", "off", "-http", takenTCP.Addr().String()},
			[]string{"FAIL  HTTP port", "fix: choose another address with -http"}},
		{"HTTP address malformed", nil, []string{"dns", "-data-dir", "DIR", "-dns-listen", "off", "-http", "notanaddr"},
			[]string{"FAIL  starts", "is not an address"}},
		{"Redis unreachable", map[string]string{"BULWARK_REDIS_URL": "redis://:s3cr3t@127.0.0.1:1/0"}, []string{"dns", "-data-dir", "DIR", "-dns-listen", "off"},
			[]string{"BULWARK_REDIS_URL set (values not shown)", "FAIL  starts", "shared-state Redis"}},
		{"rustpad without a URL", nil, []string{"rustpad"},
			[]string{"FAIL  starts", "RUSTPAD_URL"}},
		{"missing token file", nil, []string{"dns", "-hetzner-token-file", "/nonexistent/token"},
			[]string{"FAIL  flags", "hetzner-token-file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"doctor"}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "DIR", t.TempDir()))
			}
			code, out, errOut := run(t, c.vars, args...)
			if c.want == nil {
				if code != 2 || !strings.Contains(errOut, "name the server") {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				return
			}
			if code != 1 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			rest := out
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("report lacks %q (in order):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(out+errOut, "s3cr3t") {
				t.Fatalf("a secret was printed:\n%s", out)
			}
		})
	}
}

// A working configuration passes every check, on both providers.
func TestDoctorHealthy(t *testing.T) {
	api := hetznerapi.Start(t, &hetznerapi.Options{Token: "good-s3cr3t-token"})
	vdb := vdbapi.Start(t, nil)
	vdbKey := vdb.AddKey(vdbapi.OrgA, "vdb-s3cr3t-key")
	for name, c := range map[string]struct {
		vars map[string]string
		args []string
		want []string
	}{
		"local":   {nil, []string{"dns", "-data-dir", t.TempDir(), "-dns-listen", "127.0.0.1:0"}, []string{"ok    starts", "ok    DNS responder port", "ok    data directory", "ok    upstream: list_zones answered"}},
		"hetzner": {map[string]string{"HETZNER_API_TOKEN": "good-s3cr3t-token", "HETZNER_API_BASE_URL": api.URL()}, []string{"dns"}, []string{"HETZNER_API_TOKEN, HETZNER_API_BASE_URL set (values not shown)", "ok    upstream: list_zones answered"}},
		"vdb": {map[string]string{"VULNETIX_API_KEY": vdbKey, "VULNETIX_API_BASE_URL": vdb.APIURL(), "VULNETIX_SITE_BASE_URL": vdb.SiteURL()},
			[]string{"vdb"}, []string{"VULNETIX_API_KEY, VULNETIX_API_BASE_URL set (values not shown)", "ok    upstream: vdb_catalog answered"}},
		"filtered": {nil, []string{"dns", "-data-dir", t.TempDir(), "-dns-listen", "off", "-allow-tools", "get_zone"}, []string{"not checked: list_zones is not served"}},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, c.vars, append([]string{"doctor"}, c.args...)...)
			if code != 0 || strings.Contains(out, "FAIL") {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Fatalf("report lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "s3cr3t") {
				t.Fatal("a secret was printed")
			}
		})
	}
}

// On a fresh machine — no Vulnetix key, no stored sign-in, no Rustpad, no
// gateway configuration — `bulwark doctor` checks dns and skips the
// optional servers, vdb included, and exits 0; with a stored sign-in key,
// vdb is checked.
func TestDoctorFreshMachineSkipsUnconfiguredVDB(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"BULWARK_DNS_DATA_DIR": filepath.Join(dir, "zones"), "BULWARK_DNS_LISTEN": "off",
		"BULWARK_VDB_KEY_FILE": filepath.Join(dir, "no-key")}
	code, out, errOut := run(t, vars, "doctor")
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, w := range []string{"bulwark doctor vdb: skipped (VULNETIX_API_KEY is not set and no signed-in key is stored",
		"bulwark doctor rustpad: skipped", "bulwark doctor gateway: skipped", "ok    upstream: list_zones answered"} {
		if !strings.Contains(out, w) {
			t.Fatalf("report lacks %q:\n%s", w, out)
		}
	}
	if err := os.WriteFile(vars["BULWARK_VDB_KEY_FILE"], []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if why := vdbUnconfigured(func(n string) string { return vars[n] }); why != "" {
		t.Fatalf("a stored key: %s", why)
	}
	if why := vdbUnconfigured(func(n string) string { return map[string]string{"VULNETIX_API_KEY": "k"}[n] }); why != "" {
		t.Fatalf("a key: %s", why)
	}
}

// A finding's detail that quotes an error with a hint on its next line
// reads as one line with a space, not "\x0a"; other control characters
// stay escaped.
func TestDoctorLineBreaksBecomeSpaces(t *testing.T) {
	got := oneLine("  FAIL  upstream: No credential.\nHint: set it\r\nthen\tretry \x1b[31m")
	if want := `  FAIL  upstream: No credential. Hint: set it then retry \x1b[31m`; got != want {
		t.Errorf("oneLine:\n got %q\nwant %q", got, want)
	}
}
