package gateway

// The HTTP client of a URL upstream: kernel/upstream's hardened transport
// with the upstream's credential on every request (its tools/list results
// are recorded for the pins by httplist.go).

import (
	"net/http"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// httpBodyLimit is the largest response body a URL upstream's client reads.
func httpBodyLimit(u *Upstream) int { return 2*u.maxResult() + 64<<10 }

// httpClient is the hardened client for a URL upstream: kernel/upstream's
// transport (no redirects, capped bodies) with the configured credential
// added to every request — and nothing of the gateway's own clients.
func (g *Gateway) httpClient(u *Upstream) *http.Client {
	hc := upstream.New(&upstream.Options{MaxBodyBytes: int64(httpBodyLimit(u)), UserAgent: "bulwark-gateway"}).HTTPClient()
	if cred := g.creds[u.Name]; cred != "" {
		header := u.CredentialHeader
		if header == "" {
			header = "Authorization"
		}
		if strings.EqualFold(header, "Authorization") && !strings.Contains(cred, " ") {
			cred = "Bearer " + cred
		}
		hc.Transport = withHeader{rt: hc.Transport, name: header, value: cred}
	}
	return hc
}

type withHeader struct {
	rt          http.RoundTripper
	name, value string
}

func (w withHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(w.name, w.value)
	return w.rt.RoundTrip(req)
}
