package identity

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// wellKnownPRM is the RFC 9728 well-known path segment.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// resourceMetadata is an RFC 9728 protected-resource metadata document.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// metadata returns this resource server's metadata document.
func (a *OAuth) metadata() resourceMetadata {
	return resourceMetadata{
		Resource:               a.resource,
		AuthorizationServers:   a.servers,
		ScopesSupported:        a.supported,
		BearerMethodsSupported: []string{"header"},
	}
}

// MetadataURL returns the URL of the metadata document, the one named in
// challenges: the well-known path with the resource's path appended
// (RFC 9728 §3.1).
func (a *OAuth) MetadataURL() string { return a.metadataURL }

// MetadataPaths returns the paths to serve MetadataHandler on: the
// path-suffixed form for a resource with a path, and the root form that
// clients also try.
func (a *OAuth) MetadataPaths() []string {
	u, _ := url.Parse(a.metadataURL) // validated by NewOAuth
	if u.Path == wellKnownPRM {
		return []string{wellKnownPRM}
	}
	return []string{u.Path, wellKnownPRM}
}

// MetadataHandler serves the metadata document on MetadataPaths to GET and
// HEAD; other paths get 404 and other methods 405. It sets no CORS header:
// cross-origin policy is the transport guard's decision.
func (a *OAuth) MetadataHandler() http.Handler {
	body, _ := json.Marshal(a.metadata()) // plain strings: cannot fail
	paths := a.MetadataPaths()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(paths, r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(body)
	})
}

// metadataURL validates a resource URI and derives its metadata URL.
func metadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return "", errors.New("resource must be an absolute URI")
	case u.User != nil || u.Fragment != "" || u.RawQuery != "" || u.ForceQuery:
		return "", errors.New("resource must have no user information, query or fragment")
	case u.Scheme != "https" && !(u.Scheme == "http" && upstream.IsLoopbackHost(u.Hostname())):
		return "", errors.New("resource must be https (http only for loopback)")
	case u.String() != resource:
		return "", errors.New("resource is not in canonical form")
	}
	m := url.URL{Scheme: u.Scheme, Host: u.Host, Path: wellKnownPRM + strings.TrimSuffix(u.Path, "/")}
	return m.String(), nil
}
