package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDNSHiddenPrimaryFlags: -secondaries and -serial-policy that cannot
// work stop startup with what to fix; good ones start the hidden primary
// and say so, without the secret.
func TestDNSHiddenPrimaryFlags(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "tsig.key")
	if err := os.WriteFile(keyFile, []byte(tsigFile), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no key", []string{"-secondaries", "127.0.0.1:5301@bulwark-cli"}, "TSIG keys"},
		{"unknown key", []string{"-secondaries", "127.0.0.1:5301@nobody", "-tsig-key-file", keyFile}, "nobody"},
		{"no at", []string{"-secondaries", "127.0.0.1:5301", "-tsig-key-file", keyFile}, "ADDR[:PORT]@KEY"},
		{"not an address", []string{"-secondaries", "ns1.example.com@bulwark-cli", "-tsig-key-file", keyFile}, "not an IP address"},
		{"bad zone", []string{"-secondaries", "a..b=127.0.0.1@bulwark-cli", "-tsig-key-file", keyFile}, "a..b"},
		{"responder off", []string{"-secondaries", "127.0.0.1@bulwark-cli", "-tsig-key-file", keyFile, "-dns-listen", "off"}, "-dns-listen"},
		{"serial policy", []string{"-serial-policy", "weekly"}, "-serial-policy"},
		{"dnssec algorithm", []string{"-dnssec", "example.com=rsasha1"}, "-dnssec"},
		{"dnssec denial", []string{"-dnssec", "*=ed25519/nsec5"}, "-dnssec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"dns", "-data-dir", t.TempDir(), "-dns-listen", "127.0.0.1:0"}, c.args...)
			code, _, errOut := run(t, nil, args...)
			if code != 2 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, tsigSecret) {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
		})
	}
	code, _, errOut := run(t, nil, "dns", "-data-dir", t.TempDir(), "-dns-listen", "127.0.0.1:0", "-tsig-key-file", keyFile,
		"-secondaries", "127.0.0.1:5301@bulwark-cli,example.com=[::1]@bulwark-cli", "-serial-policy", "increment,example.com=date")
	for _, want := range []string{"hidden primary: secondary", "addr=127.0.0.1:5301", "addr=[::1]:53", "zones=example.com", "zones=all"} {
		if code != 0 || !strings.Contains(errOut, want) {
			t.Fatalf("exit %d, stderr lacks %q: %s", code, want, errOut)
		}
	}
	if strings.Contains(errOut, tsigSecret) {
		t.Fatal("the secret reached the log")
	}
}

// TestDNSSECFlag: -dnssec signs the zones named; get_zone shows the DS for
// the parent and never the private key.
func TestDNSSECFlag(t *testing.T) {
	dir := t.TempDir()
	cs, _, _ := session(t, nil, "-data-dir", dir, "-dns-listen", "off", "-dnssec", "example.com=ed25519/nsec3")
	call(t, cs, "create_zone", map[string]any{"name": "example.com", "mode": "primary"})
	out := call(t, cs, "get_zone", map[string]any{"zone": "example.com"})
	if !strings.Contains(out, `"denial":"nsec3"`) || !strings.Contains(out, "IN\\tDS\\t") || !strings.Contains(out, `"algorithm":"ED25519"`) {
		t.Fatalf("get_zone: %s", out)
	}
	key, err := os.ReadFile(filepath.Join(dir, "example.com.dnssec-key"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(key), "PrivateKey: ")
	if i < 0 || strings.Contains(out, string(key)[i+12:i+40]) {
		t.Fatal("get_zone shows the private key, or the key file has none")
	}
}
