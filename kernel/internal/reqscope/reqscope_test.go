package reqscope

import (
	"context"
	"net/http/httptest"
	"testing"
)

// TestEnsure: a request without a Scope gets one in a copy (the caller's
// request is left as it was); a request with one gets it back, with no
// copy; what a layer records is seen through every context derived from
// the request's.
func TestEnsure(t *testing.T) {
	r := httptest.NewRequest("POST", "/mcp", nil)
	if From(r.Context()) != nil {
		t.Fatal("a fresh request has a scope")
	}
	r2, sc := Ensure(r)
	if r2 == r || sc == nil || From(r.Context()) != nil || From(r2.Context()) != sc {
		t.Fatalf("first Ensure: copied %v, scope %p, caller's %p, copy's %p", r2 != r, sc, From(r.Context()), From(r2.Context()))
	}
	r3, sc3 := Ensure(r2)
	if r3 != r2 || sc3 != sc {
		t.Fatal("second Ensure copied the request or made another scope")
	}
	sc.Principal = "p"
	type key struct{}
	inner := context.WithValue(r2.Context(), key{}, 1)
	if got := From(inner); got != sc || got.Principal != "p" {
		t.Fatalf("a derived context sees %+v", got)
	}
}
