// Package identity answers "who is calling, on which plan": it turns an HTTP
// request into a Principal. The caller's own provider credentials (BYOK)
// are the kernel's (kernel.Credential); CheckCredentialHeader says which
// headers may carry them.
//
// Three authenticators implement Authenticator:
//
//   - None: no credential; for a loopback listener (and stdio, which uses
//     Local directly). Every caller is the principal "local".
//   - APIKeys: bearer API keys checked against SHA-256 hashes from a file.
//   - OAuth: an OAuth 2.1 resource server that verifies JWT access tokens
//     against a JWKS (JOSE by go-jose, bulwark's policy on top) and serves
//     RFC 9728 protected-resource metadata.
//
// Middleware runs an Authenticator, stores the Principal in the request
// context and answers refusals with a WWW-Authenticate challenge and a short
// fixed body; the detail goes only to the log, under an id the client also
// sees. The kernel never passes the client's token upstream: after a
// successful authentication Middleware removes the Authorization and
// X-API-Key headers from the request it hands on.
package identity

import (
	"context"
	"net"
	"net/http"

	"github.com/bulwarkmcp/bulwark/kernel/internal/reqscope"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Credential schemes a Principal can carry.
const (
	SchemeNone   = "none"
	SchemeAPIKey = "apikey"
	schemeOAuth  = "oauth"
)

// planLocal is the plan of the unauthenticated local principal.
//
// It is deliberately not a commercial tier such as "pro": None
// authenticates nobody, so anything on the machine that can reach the
// loopback port gets this plan. Unknown plans fail closed in
// ratelimit.Tiers, so tiered tools stay closed to it unless the operator
// lists "local" among the plans or sets NoneOptions.Plan; untiered tools
// (the usual case) are open. Audit records then say plainly that no
// authentication took place.
const planLocal = "local"

// Principal is an authenticated caller.
type Principal struct {
	// ID identifies the caller; limits, confirmation tokens and sealed
	// handles are keyed by it. It never contains a credential.
	ID string
	// Plan is the caller's plan name, compared with tool tiers.
	Plan string
	// Scheme is how the caller authenticated: SchemeNone, SchemeAPIKey or
	// schemeOAuth.
	Scheme string
	// Groups are the groups the credential names: the groups claim of an
	// OAuth token, the groups= field of an API key. Authorization policies
	// read them (principal.groups, principal in Group::"<g>").
	Groups []string
	// Scopes are the scopes an OAuth token grants (scope and scp claims).
	Scopes []string
}

// Authenticator authenticates one HTTP request. A refusal is an *authError
// that carries the HTTP status and the WWW-Authenticate challenge; any
// other error is an internal failure (Middleware answers 500).
// Authenticate must not read the request body.
type Authenticator interface {
	Authenticate(r *http.Request) (Principal, error)
}

type principalKey struct{}

// withPrincipal returns a context that carries p.
func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal Middleware stored (in the request's
// reqscope.Scope) or withPrincipal stored, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	if sc := reqscope.From(ctx); sc != nil {
		if p, ok := sc.Principal.(Principal); ok {
			return p, true
		}
	}
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Local returns the principal of an unauthenticated local caller (stdio,
// or None over loopback). An empty plan means planLocal.
func Local(plan string) Principal {
	if plan == "" {
		plan = planLocal
	}
	return Principal{ID: "local", Plan: plan, Scheme: SchemeNone}
}

// NoneOptions configures None. The zero value is usable.
type NoneOptions struct {
	// Plan is the plan of the local principal; empty means planLocal.
	Plan string
	// InsecureAllowRemote accepts requests whose remote address is not
	// loopback. Without it, such requests are refused with 403: a server
	// without authentication must not answer the network.
	InsecureAllowRemote bool
}

// None authenticates every request as Local, for servers that listen on
// loopback only.
type None struct {
	principal   Principal
	allowRemote bool
}

// NewNone returns a None authenticator; opts may be nil.
func NewNone(opts *NoneOptions) *None {
	var o NoneOptions
	if opts != nil {
		o = *opts
	}
	return &None{principal: Local(o.Plan), allowRemote: o.InsecureAllowRemote}
}

// Authenticate returns the local principal, or a 403 *authError when the
// peer is not on loopback.
func (n *None) Authenticate(r *http.Request) (Principal, error) {
	if !n.allowRemote && !loopbackPeer(r.RemoteAddr) {
		return Principal{}, &authError{Status: http.StatusForbidden, Kind: errNotLoopback}
	}
	return n.principal, nil
}

// loopbackPeer reports whether a request's RemoteAddr (the connection's
// IP address and port) is on loopback, by upstream.IsLoopbackHost: one
// rule for what loopback is, in the kernel's lowest package that has it.
func loopbackPeer(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	return upstream.IsLoopbackHost(host)
}
