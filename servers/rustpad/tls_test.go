package rustpad_test

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/servers/rustpad"
)

// InsecureTLS switches certificate checks off for the configured
// connection only: both channels (WebSocket, /api) of this server accept
// the self-signed certificate, while a default client in the same process
// still verifies, and a server without the setting refuses.
func TestInsecureTLSIsScoped(t *testing.T) {
	f := newFixture(t, setup{tls: true, cfg: rustpad.Config{InsecureTLS: true}})
	f.ok(t, "create_document", map[string]any{"id": "tls", "text": "over tls"}, nil)
	if got := body(t, f.ok(t, "get_document", map[string]any{"id": "tls"}, nil)); got != "over tls" {
		t.Fatalf("get_document %q", got)
	}
	f.ok(t, "get_stats", nil, nil)

	// Another TLS server with its own certificate, and the default client.
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	other.Config.ErrorLog = log.New(io.Discard, "", 0)
	other.StartTLS()
	defer other.Close()
	for name, c := range map[string]*http.Client{"http.DefaultClient": http.DefaultClient, "a new http.Client": {}} {
		_, err := c.Get(other.URL)
		var cv *tls.CertificateVerificationError
		if !errors.As(err, &cv) {
			t.Errorf("%s accepted an untrusted certificate: %v", name, err)
		}
		// And the Rustpad instance itself, outside the server.
		if _, err := c.Get(f.url + "/api/stats"); !errors.As(err, &cv) {
			t.Errorf("%s accepted the pad server's certificate: %v", name, err)
		}
	}
	if tc := http.DefaultTransport.(*http.Transport).TLSClientConfig; tc != nil && tc.InsecureSkipVerify {
		t.Fatal("http.DefaultTransport was changed")
	}

	// A second server in the same process without the setting verifies.
	strict := newFixture(t, setup{tls: true})
	strict.fails(t, "get_document_info", map[string]any{"id": "tls"}, kernel.UpstreamUnavailable)
	strict.fails(t, "get_document", map[string]any{"id": "tls"}, kernel.UpstreamUnavailable)
}
