package identity

import (
	"errors"
	"net/http"
)

// Kinds of authentication refusal. An *authError wraps exactly one of them;
// test with errors.Is.
var (
	// errNoCredentials: the request carries no credential at all (401, and
	// the challenge has no error code, per RFC 6750 §3.1).
	errNoCredentials = errors.New("identity: no credentials")
	// errInvalidToken: a credential was presented and failed (401,
	// error="invalid_token").
	errInvalidToken = errors.New("identity: invalid token")
	// errInsufficientScope: a valid token lacks a required scope (403,
	// error="insufficient_scope").
	errInsufficientScope = errors.New("identity: insufficient scope")
	// errInvalidRequest: the request is malformed, such as a token in the
	// query string or two competing credentials (400,
	// error="invalid_request").
	errInvalidRequest = errors.New("identity: invalid authorization request")
	// errKeysUnavailable: the verification keys could not be loaded, so no
	// token can be checked (503; the client should retry, not sign in
	// again).
	errKeysUnavailable = errors.New("identity: verification keys unavailable")
	// errNotLoopback: None refused a peer that is not on loopback (403).
	errNotLoopback = errors.New("identity: unauthenticated access is limited to loopback")
)

// authError is an authentication refusal. Status and Challenge are what the
// client receives; Detail is for the log only and never reaches the client.
// Detail never contains the credential itself.
type authError struct {
	// Status is the HTTP status: 400, 401, 403 or 503.
	Status int
	// Challenge is the WWW-Authenticate value; empty for none.
	Challenge string
	// Kind is one of the Err* sentinels of this package.
	Kind error
	// Detail says what failed, for the log; may be nil.
	Detail error
}

// Error returns the kind and the detail. It is meant for logs, not clients.
func (e *authError) Error() string {
	if e.Detail == nil {
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Detail.Error()
}

// Unwrap returns the kind and the detail, for errors.Is and errors.As.
func (e *authError) Unwrap() []error {
	if e.Detail == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Detail}
}

// code returns the short error code shown to the client.
func (e *authError) code() string {
	switch {
	case errors.Is(e.Kind, errInvalidToken):
		return "invalid_token"
	case errors.Is(e.Kind, errInsufficientScope):
		return "insufficient_scope"
	case errors.Is(e.Kind, errInvalidRequest):
		return "invalid_request"
	case errors.Is(e.Kind, errKeysUnavailable):
		return "temporarily_unavailable"
	case errors.Is(e.Kind, errNotLoopback):
		return "forbidden"
	default:
		return "unauthorized"
	}
}

// message returns the fixed sentence shown to the client.
func (e *authError) message() string {
	switch e.code() {
	case "invalid_token":
		return "The access token is invalid or expired."
	case "insufficient_scope":
		return "The access token lacks a required scope."
	case "invalid_request":
		return "Malformed authorization request. Send the token in the Authorization header only."
	case "temporarily_unavailable":
		return "Authentication is temporarily unavailable. Retry later."
	case "forbidden":
		return "Forbidden."
	default:
		return "Authentication required."
	}
}

// refuse builds an *authError for kind with the status that kind implies.
func refuse(kind error, challenge string, detail error) *authError {
	status := http.StatusUnauthorized
	switch kind {
	case errInsufficientScope, errNotLoopback:
		status = http.StatusForbidden
	case errInvalidRequest:
		status = http.StatusBadRequest
	case errKeysUnavailable:
		status = http.StatusServiceUnavailable
	}
	return &authError{Status: status, Challenge: challenge, Kind: kind, Detail: detail}
}
