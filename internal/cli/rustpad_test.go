package cli

import (
	"strings"
	"testing"
)

// A plain-http RUSTPAD_URL to a host that is not loopback starts with one
// warning that names the host (issue 10.13); a loopback one starts quietly.
func TestRustpadPlainHTTPWarning(t *testing.T) {
	code, _, errOut := run(t, map[string]string{"RUSTPAD_URL": "http://pad.example.com:3030/pads"}, "rustpad")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(errOut, "plain http to pad.example.com:3030, which is not loopback"); n != 1 || !strings.Contains(errOut, "level=WARN") {
		t.Fatalf("%d warnings naming the host:\n%s", n, errOut)
	}
	code, _, errOut = run(t, map[string]string{"RUSTPAD_URL": "http://127.0.0.1:3030"}, "rustpad")
	if code != 0 || strings.Contains(errOut, "plain http") || strings.Contains(errOut, "level=WARN") {
		t.Fatalf("loopback: exit %d:\n%s", code, errOut)
	}
	code, _, errOut = run(t, map[string]string{"RUSTPAD_URL": "https://pad.example.com", "RUSTPAD_INSECURE_TLS": "true"}, "rustpad")
	if code != 0 || strings.Count(errOut, "certificates of pad.example.com are not verified") != 1 {
		t.Fatalf("insecure TLS: exit %d:\n%s", code, errOut)
	}
}
