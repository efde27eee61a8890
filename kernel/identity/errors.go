package identity

import (
	"errors"
	"net/http"
)

// Kinds of authentication refusal. An *AuthError wraps exactly one of them;
// test with errors.Is.
var (
	// ErrNoCredentials: the request carries no credential at all (401, and
	// the challenge has no error code, per RFC 6750 §3.1).
	ErrNoCredentials = errors.New("identity: no credentials")
	// ErrInvalidToken: a credential was presented and failed (401,
	// error="invalid_token").
	ErrInvalidToken = errors.New("identity: invalid token")
	// ErrInsufficientScope: a valid token lacks a required scope (403,
	// error="insufficient_scope").
	ErrInsufficientScope = errors.New("identity: insufficient scope")
	// ErrInvalidRequest: the request is malformed, such as a token in the
	// query string or two competing credentials (400,
	// error="invalid_request").
	ErrInvalidRequest = errors.New("identity: invalid authorization request")
	// ErrKeysUnavailable: the verification keys could not be loaded, so no
	// token can be checked (503; the client should retry, not sign in
	// again).
	ErrKeysUnavailable = errors.New("identity: verification keys unavailable")
	// ErrNotLoopback: None refused a peer that is not on loopback (403).
	ErrNotLoopback = errors.New("identity: unauthenticated access is limited to loopback")
)

// AuthError is an authentication refusal. Status and Challenge are what the
// client receives; Detail is for the log only and never reaches the client.
// Detail never contains the credential itself.
type AuthError struct {
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
func (e *AuthError) Error() string {
	if e.Detail == nil {
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Detail.Error()
}

// Unwrap returns the kind and the detail, for errors.Is and errors.As.
func (e *AuthError) Unwrap() []error {
	if e.Detail == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Detail}
}

// code returns the short error code shown to the client.
func (e *AuthError) code() string {
	switch {
	case errors.Is(e.Kind, ErrInvalidToken):
		return "invalid_token"
	case errors.Is(e.Kind, ErrInsufficientScope):
		return "insufficient_scope"
	case errors.Is(e.Kind, ErrInvalidRequest):
		return "invalid_request"
	case errors.Is(e.Kind, ErrKeysUnavailable):
		return "temporarily_unavailable"
	case errors.Is(e.Kind, ErrNotLoopback):
		return "forbidden"
	default:
		return "unauthorized"
	}
}

// message returns the fixed sentence shown to the client.
func (e *AuthError) message() string {
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

// refuse builds an *AuthError for kind with the status that kind implies.
func refuse(kind error, challenge string, detail error) *AuthError {
	status := http.StatusUnauthorized
	switch kind {
	case ErrInsufficientScope, ErrNotLoopback:
		status = http.StatusForbidden
	case ErrInvalidRequest:
		status = http.StatusBadRequest
	case ErrKeysUnavailable:
		status = http.StatusServiceUnavailable
	}
	return &AuthError{Status: status, Challenge: challenge, Kind: kind, Detail: detail}
}
