package identity

import (
	"errors"
	"fmt"
	"github.com/bulwarkmcp/bulwark/kernel/internal/httpsyntax"
	"net/http"
	"net/textproto"
	"strings"
)

// Header names read for credentials. Middleware removes both after a
// successful authentication.
const (
	headerAuthorization = "Authorization"
	headerAPIKey        = "X-Api-Key"
)

// CheckCredentialHeader reports whether a header may carry a provider
// credential (BYOK): a header name of at most 128 characters that is not
// read by authentication (Authorization, X-API-Key, which Middleware
// removes) and is not Cookie.
func CheckCredentialHeader(name string) error {
	c := textproto.CanonicalMIMEHeaderKey(name)
	switch {
	case len(name) > 128 || !httpsyntax.IsToken(name):
		return fmt.Errorf("%q is not a header name", name)
	case c == headerAuthorization || c == headerAPIKey || c == "Cookie":
		return fmt.Errorf("%s is reserved for authentication", c)
	}
	return nil
}

var (
	errTokenInQuery     = errors.New("access token in the query string")
	errManyAuthHeaders  = errors.New("more than one Authorization or X-API-Key header")
	errCompetingTokens  = errors.New("the Authorization and X-API-Key headers carry different credentials")
	errOtherAuthScheme  = errors.New("Authorization scheme is not Bearer")
	errEmptyBearer      = errors.New("empty bearer credential")
	errCredentialTooBig = errors.New("credential longer than the limit")
)

// tokenInQuery reports whether the URL carries an access token, which RFC
// 6750 permits but the MCP authorization spec forbids: URLs end up in logs.
func tokenInQuery(r *http.Request) bool {
	return r.URL != nil && r.URL.Query().Has("access_token")
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
// It returns "" and nil when there is no Authorization header, and
// errOtherAuthScheme for another scheme.
func bearer(h http.Header) (string, error) {
	vals := h.Values(headerAuthorization)
	switch {
	case len(vals) == 0:
		return "", nil
	case len(vals) > 1:
		return "", errManyAuthHeaders
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", errOtherAuthScheme
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", errEmptyBearer
	}
	return token, nil
}
