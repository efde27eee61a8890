// Package reqscope carries one HTTP request's values for every kernel layer
// in one context value. The first layer that needs it (the body guard)
// stores a Scope in the request's context; later layers — the guards,
// authentication, the kernel's admission — record what they learn in it,
// instead of each storing its own context value and copying the request
// (http.Request.WithContext copies the whole request).
//
// A Scope is written by a layer before it calls the next one and read by the
// layers inside, so what a layer records happens before every read of it.
// Its slots hold pointers or small values of the owning package's own types;
// only that package reads them.
package reqscope

import (
	"context"
	"net/http"
)

type key struct{}

// Scope is one request's values.
type Scope struct {
	// Guards is kernel/httpguard's per-request state.
	Guards any
	// Principal is the principal kernel/identity authenticated.
	Principal any
	// Kernel is the kernel's per-request state (the client's network, the
	// call's admission).
	Kernel any
	// Egress is the kernel's egress gate's per-request state: the secrets
	// the request's call registered, removed from its response.
	Egress any
}

// From returns the request's Scope, or nil.
func From(ctx context.Context) *Scope {
	sc, _ := ctx.Value(key{}).(*Scope)
	return sc
}

// With returns a copy of r whose context carries sc.
func With(r *http.Request, sc *Scope) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), key{}, sc))
}

// Ensure returns r's Scope, and r itself; when r has none, a new Scope and
// a copy of r that carries it.
func Ensure(r *http.Request) (*http.Request, *Scope) {
	if sc := From(r.Context()); sc != nil {
		return r, sc
	}
	sc := new(Scope)
	return With(r, sc), sc
}
