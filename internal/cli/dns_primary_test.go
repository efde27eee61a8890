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
