package kernel_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// groupsPolicy lets the ops group call anything, and holders of the
// dns:write scope call the write tool.
const groupsPolicy = `
@id("ops") permit(principal, action, resource) when { principal.groups.contains("ops") };
@id("writers") permit(principal, action == Action::"write_item", resource) when { principal.scopes.contains("dns:write") };
`

// authzHTTP serves the kernel's test tools and a write tool over HTTP
// behind auth, with groupsPolicy in force.
func authzHTTP(t *testing.T, auth identity.Authenticator) string {
	t.Helper()
	pf := filepath.Join(t.TempDir(), "p.cedar")
	if err := os.WriteFile(pf, []byte(groupsPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := []kernel.Tool{
		kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{Name: "read_item", Description: "Read an item.", Policy: readPolicy,
			Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) {
				return map[string]string{"ok": "read"}, nil
			}}),
		kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{Name: "write_item", Description: "Write an item.",
			Policy: kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: kernel.Open},
			Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) {
				return map[string]string{"ok": "written"}, nil
			}}),
	}
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, tools, &kernel.Options{Authz: &authz.Config{PolicyFile: pf}})
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{Auth: auth})
}

// callAs calls tool with bearer credential cred and says whether it ran.
func callAs(t *testing.T, url, cred, tool string) bool {
	t.Helper()
	resp, body := post(t, url, callBody(tool, map[string]any{"zone": "example.com", "name": "a"}), map[string]string{"Authorization": "Bearer " + cred})
	if resp.StatusCode != 200 {
		t.Fatalf("%s: status %d %s", tool, resp.StatusCode, body)
	}
	var out struct {
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if out.Result.IsError && !strings.Contains(body, "permission_denied") {
		t.Fatalf("%s failed otherwise: %s", tool, body)
	}
	return !out.Result.IsError
}

// TestAuthzGroupsFromAPIKeys: the groups= field of the API-key file
// reaches the policy as principal.groups, over HTTP: two keys, one in ops,
// are decided differently by the same policy.
func TestAuthzGroupsFromAPIKeys(t *testing.T) {
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(apiKey) + " pro alice groups=ops,dev\n" + identity.HashKey(freeKey) + " free bob groups=dev\n"))
	if err != nil {
		t.Fatal(err)
	}
	url := authzHTTP(t, keys)
	if !callAs(t, url, apiKey, "read_item") || !callAs(t, url, apiKey, "write_item") {
		t.Error("alice, in ops, was refused")
	}
	if callAs(t, url, freeKey, "read_item") || callAs(t, url, freeKey, "write_item") {
		t.Error("bob, not in ops, was allowed")
	}
}

// TestAuthzGroupsAndScopesFromOAuth: an OAuth token's groups claim and
// its scopes reach the policy, over HTTP: a token in ops may call both
// tools, one granting dns:write only the write tool, one with neither
// nothing.
func TestAuthzGroupsAndScopesFromOAuth(t *testing.T) {
	const resource, issuer = "https://mcp.example.com/mcp", "https://auth.example.com"
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	set, _ := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA", "use": "sig",
		"x": base64.RawURLEncoding.EncodeToString(pub)}}})
	if err := os.WriteFile(jwks, set, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := identity.NewJWKSFile(jwks, nil)
	if err != nil {
		t.Fatal(err)
	}
	oauth, err := identity.NewOAuth(resource, issuer, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	token := func(sub string, extra map[string]any) string {
		claims := map[string]any{"iss": issuer, "sub": sub, "aud": resource, "exp": time.Now().Add(time.Hour).Unix(), "scope": "mcp:tools"}
		for k, v := range extra {
			claims[k] = v
		}
		h, _ := json.Marshal(map[string]string{"alg": "EdDSA", "kid": "k1", "typ": "at+jwt"})
		c, _ := json.Marshal(claims)
		in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
		return in + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(in)))
	}
	url := authzHTTP(t, oauth)
	ops := token("carol", map[string]any{"groups": []string{"ops"}})
	writer := token("dave", map[string]any{"groups": []string{"dev"}, "scp": []string{"dns:write"}})
	nobody := token("erin", map[string]any{"groups": "dev"})
	for _, tc := range []struct {
		who, tok, tool string
		want           bool
	}{
		{"ops", ops, "read_item", true}, {"ops", ops, "write_item", true},
		{"writer", writer, "read_item", false}, {"writer", writer, "write_item", true},
		{"nobody", nobody, "read_item", false}, {"nobody", nobody, "write_item", false},
	} {
		if got := callAs(t, url, tc.tok, tc.tool); got != tc.want {
			t.Errorf("%s calling %s: ran=%v, want %v", tc.who, tc.tool, got, tc.want)
		}
	}
}
