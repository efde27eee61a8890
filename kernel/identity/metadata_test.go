package identity

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestMetadataURL(t *testing.T) {
	tests := []struct{ resource, want string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example.com/a/b/", "https://mcp.example.com/.well-known/oauth-protected-resource/a/b"},
		{"https://mcp.example.com", "https://mcp.example.com/.well-known/oauth-protected-resource"},
		{"https://mcp.example.com/", "https://mcp.example.com/.well-known/oauth-protected-resource"},
		{"https://mcp.example.com:8443/mcp", "https://mcp.example.com:8443/.well-known/oauth-protected-resource/mcp"},
		{"http://127.0.0.1:8931/mcp", "http://127.0.0.1:8931/.well-known/oauth-protected-resource/mcp"},
	}
	for _, tt := range tests {
		got, err := metadataURL(tt.resource)
		if err != nil || got != tt.want {
			t.Errorf("metadataURL(%q) = %q, %v; want %q", tt.resource, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "mcp", "http://mcp.example.com/mcp", "https://mcp.example.com/mcp?x", "https://a@mcp.example.com/"} {
		if _, err := metadataURL(bad); err == nil {
			t.Errorf("metadataURL(%q) accepted", bad)
		}
	}
}

func TestMetadataHandler(t *testing.T) {
	a := newTestOAuth(t, &OAuthOptions{RequiredScopes: []string{"mcp:tools"}, ScopesSupported: []string{"mcp:tools", "mcp:admin"}})
	h := a.MetadataHandler()
	if got := a.MetadataPaths(); !slices.Equal(got, []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}) {
		t.Fatalf("paths %v", got)
	}
	for _, path := range a.MetadataPaths() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %v", path, w.Code, w.Header())
		}
		var doc map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"resource":                 testResource,
			"authorization_servers":    []any{testIssuer},
			"scopes_supported":         []any{"mcp:tools", "mcp:admin"},
			"bearer_methods_supported": []any{"header"},
		}
		gotJSON, _ := json.Marshal(doc)
		wantJSON, _ := json.Marshal(want)
		if string(gotJSON) != string(wantJSON) {
			t.Fatalf("%s:\n got %s\nwant %s", path, gotJSON, wantJSON)
		}
	}
	for _, tt := range []struct {
		method, path string
		code         int
	}{
		{"POST", "/.well-known/oauth-protected-resource/mcp", 405},
		{"GET", "/.well-known/oauth-protected-resource/other", 404},
		{"HEAD", "/.well-known/oauth-protected-resource", 200},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
		if w.Code != tt.code {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, w.Code, tt.code)
		}
	}
	root := newTestOAuthFor(t, "https://mcp.example.com")
	if got := root.MetadataPaths(); !slices.Equal(got, []string{"/.well-known/oauth-protected-resource"}) {
		t.Fatalf("root paths %v", got)
	}
}

func newTestOAuthFor(t *testing.T, resource string) *OAuth {
	set, _ := parseJWKS(publishedSet(t))
	a, err := NewOAuth(resource, testIssuer, staticJWKS(set), &OAuthOptions{AuthorizationServers: []string{"https://as.example"}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
