package cli

import (
	"strings"
	"testing"
)

// TestDNSListen: a -dns-listen value that is no address stops startup; a
// bare port binds loopback; an address beyond loopback is warned about
// (issue 10.3).
func TestDNSListen(t *testing.T) {
	if code, _, errOut := run(t, nil, "dns", "-dns-listen", "bogus", "-data-dir", t.TempDir()); code != 2 || !strings.Contains(errOut, "-dns-listen") {
		t.Fatalf("bogus: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut := run(t, nil, "dns", "-dns-listen", ":0", "-data-dir", t.TempDir())
	if code != 0 || !strings.Contains(errOut, "addr=127.0.0.1:") || strings.Contains(errOut, "beyond loopback") {
		t.Fatalf("bare port: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, nil, "dns", "-dns-listen", "0.0.0.0:0", "-data-dir", t.TempDir())
	if code != 0 || !strings.Contains(errOut, "beyond loopback") {
		t.Fatalf("0.0.0.0: exit %d, stderr %q", code, errOut)
	}
}
