package authz

import "testing"

// TestLastPrincipalExact: the entry Decide keeps for the last principal
// answers only a principal equal to it in every field, and a caller who
// changes its Groups or Scopes array in place after a call is not taken
// for the principal it was.
func TestLastPrincipalExact(t *testing.T) {
	m := &Model{Server: "s", Actions: []Action{{Name: "note"}}}
	p, err := Parse(m, "p", []byte(`@id("ops") permit(principal in Group::"ops", action, resource);
@id("plan") permit(principal, action, resource) when { principal.plan == "pro" && principal.auth == "apikey" };
@id("scope") permit(principal, action, resource) when { principal.scopes.contains("write") };`), nil)
	if err != nil {
		t.Fatal(err)
	}
	decide := func(pr Principal) bool { return p.Decide(Request{Principal: pr, Action: "note"}).Allow }
	groups, scopes := []string{"ops"}, []string{"write"}
	steps := []struct {
		pr    Principal
		allow bool
	}{
		{Principal{ID: "u", Groups: groups}, true},
		{Principal{ID: "u"}, false},
		{Principal{ID: "u", Groups: groups}, true},
		{Principal{ID: "u", Plan: "pro", Auth: "apikey"}, true},
		{Principal{ID: "u", Plan: "pro", Auth: "oauth"}, false},
		{Principal{ID: "v", Plan: "pro", Auth: "apikey"}, true},
		{Principal{ID: "v", Scopes: scopes}, true},
		{Principal{ID: "v", Scopes: scopes[:0]}, false},
	}
	for i, s := range steps {
		if got := decide(s.pr); got != s.allow {
			t.Fatalf("step %d %+v: allow %v, want %v", i, s.pr, got, s.allow)
		}
	}
	if !decide(Principal{ID: "w", Groups: groups}) {
		t.Fatal("w in ops denied")
	}
	groups[0] = "dev" // the caller reuses its array
	if decide(Principal{ID: "w", Groups: groups}) {
		t.Fatal("w, now in dev, allowed as the member of ops it was")
	}
	if !decide(Principal{ID: "x", Scopes: scopes}) {
		t.Fatal("x with write denied")
	}
	scopes[0] = "read"
	if decide(Principal{ID: "x", Scopes: scopes}) {
		t.Fatal("x, now with read, allowed as the writer it was")
	}
}
