package identity

import (
	"net/http/httptest"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// TestLoopbackIsOneRule: the http-only-on-loopback rule for JWKS and
// authorization-server URLs, the resource URL, and None's peer check agree
// with upstream.IsLoopbackHost, host by host.
func TestLoopbackIsOneRule(t *testing.T) {
	hosts := []string{
		"127.0.0.1", "127.9.8.7", "[::1]", "[::ffff:127.0.0.1]", "localhost", "LOCALHOST", "localhost.",
		"api.localhost", "10.0.0.1", "[::]", "0.0.0.0", "example.com", "localhost.example.com",
		"127.0.0.1.nip.io", "[fe80::1%25lo]",
	}
	for _, h := range hosts {
		want := upstream.IsLoopbackHost(h)
		if _, err := NewJWKSURL("http://"+h+":9/jwks", nil); (err == nil) != want {
			t.Errorf("JWKS URL on %s: err %v, want loopback=%v", h, err, want)
		}
		if _, err := metadataURL("http://" + h + ":9/mcp"); (err == nil) != want {
			t.Errorf("resource on %s: err %v, want loopback=%v", h, err, want)
		}
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.RemoteAddr = h + ":4711"
		if _, err := NewNone(nil).Authenticate(r); (err == nil) != want {
			t.Errorf("peer %s: err %v, want loopback=%v", h, err, want)
		}
	}
}
