package identity

import (
	"context"
	"crypto"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	testResource = "https://mcp.example.com/mcp"
	testIssuer   = "https://auth.example.com"
	testMetadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
)

var testNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func newTestOAuth(t testing.TB, opts *OAuthOptions) *OAuth {
	t.Helper()
	set, err := parseJWKS(publishedSet(t))
	if err != nil {
		t.Fatal(err)
	}
	o := OAuthOptions{RequiredScopes: []string{"mcp:tools"}, Now: func() time.Time { return testNow }}
	if opts != nil {
		o = *opts
		if o.Now == nil {
			o.Now = func() time.Time { return testNow }
		}
	}
	a, err := NewOAuth(testResource, testIssuer, staticJWKS(set), &o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// claims returns valid claims, changed by edits (a nil value deletes).
func claims(edits map[string]any) map[string]any {
	c := map[string]any{
		"iss":   testIssuer,
		"sub":   "user-42",
		"aud":   testResource,
		"exp":   testNow.Add(time.Hour).Unix(),
		"iat":   testNow.Add(-time.Minute).Unix(),
		"nbf":   testNow.Add(-time.Minute).Unix(),
		"scope": "mcp:tools other",
	}
	for k, v := range edits {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func reqWithToken(token string) *http.Request {
	r := httptest.NewRequest("POST", "http://mcp.example.com/mcp", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func TestOAuthTokens(t *testing.T) {
	k := tk(t)
	a := newTestOAuth(t, nil)
	rs := func(c map[string]any) string { return signJWT(t, "RS256", "rsa-1", k.rsa, c, nil) }
	valid := rs(claims(nil))
	parts := strings.Split(valid, ".")

	tests := []struct {
		name   string
		token  string
		status int    // 0: accepted
		code   string // challenge error code
		plan   string
	}{
		{"RS256", valid, 0, "", "free"},
		{"PS256", signJWT(t, "PS256", "rsa-1", k.rsa, claims(nil), nil), 0, "", "free"},
		{"ES256", signJWT(t, "ES256", "ec-1", k.ec, claims(nil), nil), 0, "", "free"},
		{"EdDSA", signJWT(t, "EdDSA", "ed-1", k.ed, claims(nil), nil), 0, "", "free"},
		{"Ed25519 alg name", signJWT(t, "Ed25519", "ed-1", k.ed, claims(nil), nil), 0, "", "free"},
		{"no kid, one compatible key", signJWT(t, "ES256", "", k.ec, claims(nil), nil), 0, "", "free"},
		{"at+jwt typ", signJWT(t, "RS256", "rsa-1", k.rsa, claims(nil), map[string]any{"typ": "at+jwt"}), 0, "", "free"},
		{"no typ", signJWT(t, "RS256", "rsa-1", k.rsa, claims(nil), map[string]any{"typ": nil}), 0, "", "free"},
		{"plan claim", rs(claims(map[string]any{"plan": "pro"})), 0, "", "pro"},
		{"aud array", rs(claims(map[string]any{"aud": []string{"https://other.example", testResource}})), 0, "", "free"},
		{"scp array", rs(claims(map[string]any{"scope": nil, "scp": []string{"mcp:tools"}})), 0, "", "free"},
		{"scp string", rs(claims(map[string]any{"scope": nil, "scp": "a mcp:tools"})), 0, "", "free"},
		{"expired within skew", rs(claims(map[string]any{"exp": testNow.Add(-10 * time.Second).Unix()})), 0, "", "free"},
		{"fractional exp", rs(claims(map[string]any{"exp": float64(testNow.Add(time.Hour).Unix()) + 0.5})), 0, "", "free"},

		{"alg none", encJSON(t, map[string]any{"alg": "none"}) + "." + parts[1] + ".", 401, "invalid_token", ""},
		{"alg none with signature", encJSON(t, map[string]any{"alg": "none", "kid": "rsa-1"}) + "." + parts[1] + "." + parts[2], 401, "invalid_token", ""},
		{"HS256 keyed with public key", hs256WithPublicKey(t, &k.rsa.PublicKey, "rsa-1", claims(nil)), 401, "invalid_token", ""},
		{"RS384", encJSON(t, map[string]any{"alg": "RS384", "kid": "rsa-1"}) + "." + parts[1] + "." + parts[2], 401, "invalid_token", ""},
		{"ES256 header on RSA kid", signJWT(t, "ES256", "rsa-1", k.ec, claims(nil), nil), 401, "invalid_token", ""},
		{"RS256 header on EC kid", signJWT(t, "RS256", "ec-1", k.rsa, claims(nil), nil), 401, "invalid_token", ""},
		{"EdDSA header on RSA kid", signJWT(t, "EdDSA", "rsa-1", k.ed, claims(nil), nil), 401, "invalid_token", ""},
		{"signed by another key, same kid", signJWT(t, "RS256", "rsa-1", k.rsa2, claims(nil), nil), 401, "invalid_token", ""},
		{"ES256 by another key", signJWT(t, "ES256", "ec-1", k.ec2, claims(nil), nil), 401, "invalid_token", ""},
		{"kid unknown", signJWT(t, "RS256", "rsa-9", k.rsa, claims(nil), nil), 401, "invalid_token", ""},
		{"no kid, RSA sig checked against", signJWT(t, "RS256", "", k.rsa2, claims(nil), nil), 401, "invalid_token", ""},
		{"aud trailing slash", rs(claims(map[string]any{"aud": testResource + "/"})), 401, "invalid_token", ""},
		{"aud other resource", rs(claims(map[string]any{"aud": "https://mcp.example.com"})), 401, "invalid_token", ""},
		{"aud case", rs(claims(map[string]any{"aud": "https://MCP.example.com/mcp"})), 401, "invalid_token", ""},
		{"aud missing", rs(claims(map[string]any{"aud": nil})), 401, "invalid_token", ""},
		{"aud number", rs(claims(map[string]any{"aud": 7})), 401, "invalid_token", ""},
		{"aud empty array", rs(claims(map[string]any{"aud": []string{}})), 401, "invalid_token", ""},
		{"expired", rs(claims(map[string]any{"exp": testNow.Add(-time.Minute).Unix()})), 401, "invalid_token", ""},
		{"expired beyond the 30 s leeway", rs(claims(map[string]any{"exp": testNow.Add(-31 * time.Second).Unix()})), 401, "invalid_token", ""},
		{"exp missing", rs(claims(map[string]any{"exp": nil})), 401, "invalid_token", ""},
		{"exp string", rs(claims(map[string]any{"exp": "2030-01-01"})), 401, "invalid_token", ""},
		{"exp negative", rs(claims(map[string]any{"exp": -1})), 401, "invalid_token", ""},
		{"nbf in future", rs(claims(map[string]any{"nbf": testNow.Add(time.Minute).Unix()})), 401, "invalid_token", ""},
		{"iat in future", rs(claims(map[string]any{"iat": testNow.Add(time.Hour).Unix()})), 401, "invalid_token", ""},
		{"wrong iss", rs(claims(map[string]any{"iss": "https://evil.example.com"})), 401, "invalid_token", ""},
		{"iss trailing slash", rs(claims(map[string]any{"iss": testIssuer + "/"})), 401, "invalid_token", ""},
		{"iss missing", rs(claims(map[string]any{"iss": nil})), 401, "invalid_token", ""},
		{"sub missing", rs(claims(map[string]any{"sub": nil})), 401, "invalid_token", ""},
		{"sub with newline", rs(claims(map[string]any{"sub": "a\nb"})), 401, "invalid_token", ""},
		{"plan not a name", rs(claims(map[string]any{"plan": "pro plus"})), 401, "invalid_token", ""},
		{"plan number", rs(claims(map[string]any{"plan": 3})), 401, "invalid_token", ""},
		{"groups number", rs(claims(map[string]any{"groups": 3})), 401, "invalid_token", ""},
		{"groups of numbers", rs(claims(map[string]any{"groups": []int{1}})), 401, "invalid_token", ""},
		{"empty group name", rs(claims(map[string]any{"groups": []string{"ops", ""}})), 401, "invalid_token", ""},
		{"group with a newline", rs(claims(map[string]any{"groups": []string{"ops\nadmins"}})), 401, "invalid_token", ""},
		{"overlong group", rs(claims(map[string]any{"groups": []string{strings.Repeat("g", 257)}})), 401, "invalid_token", ""},
		{"too many groups", rs(claims(map[string]any{"groups": manyGroups(257)})), 401, "invalid_token", ""},
		{"scope not a string", rs(claims(map[string]any{"scope": []string{"mcp:tools"}})), 401, "invalid_token", ""},
		{"missing scope", rs(claims(map[string]any{"scope": "other"})), 403, "insufficient_scope", ""},
		{"scope prefix only", rs(claims(map[string]any{"scope": "mcp:tool mcp:toolsX"})), 403, "insufficient_scope", ""},
		{"no scope at all", rs(claims(map[string]any{"scope": nil})), 403, "insufficient_scope", ""},
		{"expired and missing scope is 401", rs(claims(map[string]any{"scope": "other", "exp": testNow.Add(-time.Hour).Unix()})), 401, "invalid_token", ""},
		{"crit header", signJWT(t, "RS256", "rsa-1", k.rsa, claims(nil), map[string]any{"crit": []string{"exp"}}), 401, "invalid_token", ""},
		{"b64 header", signJWT(t, "RS256", "rsa-1", k.rsa, claims(nil), map[string]any{"b64": false}), 401, "invalid_token", ""},
		{"typ dpop", signJWT(t, "RS256", "rsa-1", k.rsa, claims(nil), map[string]any{"typ": "dpop+jwt"}), 401, "invalid_token", ""},
		{"kid number", signJWT(t, "RS256", "rsa-1", k.rsa, claims(nil), map[string]any{"kid": 1}), 401, "invalid_token", ""},
		{"tampered payload", parts[0] + "." + encJSON(t, claims(map[string]any{"sub": "admin"})) + "." + parts[2], 401, "invalid_token", ""},
		{"padded base64", parts[0] + "=." + parts[1] + "." + parts[2], 401, "invalid_token", ""},
		{"std base64 alphabet", parts[0] + "." + parts[1] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(parts[2]) + "+", 401, "invalid_token", ""},
		{"non-canonical base64", parts[0] + "." + parts[1] + "." + flipLastBits(parts[2]), 401, "invalid_token", ""},
		{"two parts", parts[0] + "." + parts[1], 401, "invalid_token", ""},
		{"four parts", valid + "." + parts[2], 401, "invalid_token", ""},
		{"JWE shape", "a.b.c.d.e", 401, "invalid_token", ""},
		{"header not JSON", enc([]byte("not json")) + "." + parts[1] + "." + parts[2], 401, "invalid_token", ""},
		{"claims not object", parts[0] + "." + enc([]byte(`["x"]`)) + "." + parts[2], 401, "invalid_token", ""},
		{"duplicate claim", signRaw(t, `{"alg":"RS256","kid":"rsa-1"}`, `{"iss":"`+testIssuer+`","sub":"a","aud":"`+testResource+`","exp":9999999999,"scope":"mcp:tools","aud":"https://x"}`), 401, "invalid_token", ""},
		{"duplicate alg", signRaw(t, `{"alg":"RS256","kid":"rsa-1","alg":"none"}`, `{"iss":"`+testIssuer+`","sub":"a","aud":"`+testResource+`","exp":9999999999,"scope":"mcp:tools"}`), 401, "invalid_token", ""},
		{"claims with trailing data", signRaw(t, `{"alg":"RS256","kid":"rsa-1"}`, `{"iss":"`+testIssuer+`","sub":"a","aud":"`+testResource+`","exp":9999999999,"scope":"mcp:tools"} {}`), 401, "invalid_token", ""},
		{"upper-case claim names", signRaw(t, `{"alg":"RS256","kid":"rsa-1"}`, `{"ISS":"`+testIssuer+`","SUB":"a","AUD":"`+testResource+`","EXP":9999999999,"scope":"mcp:tools"}`), 401, "invalid_token", ""},
		{"ES256 DER signature", esDER(t, parts), 401, "invalid_token", ""},
		{"huge token", rs(claims(map[string]any{"pad": strings.Repeat("x", 9000)})), 401, "invalid_token", ""},
		{"garbage", "not-a-jwt", 401, "invalid_token", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(reqWithToken(tt.token))
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				want := Principal{ID: testIssuer + "|user-42", Plan: tt.plan, Scheme: schemeOAuth}
				if p.ID != want.ID || p.Plan != want.Plan || p.Scheme != want.Scheme || p.Groups != nil {
					t.Fatalf("principal %+v, want %+v", p, want)
				}
				return
			}
			var ae *authError
			if !errors.As(err, &ae) {
				t.Fatalf("accepted or wrong error type: %+v, %v", p, err)
			}
			if ae.Status != tt.status || !strings.Contains(ae.Challenge, `error="`+tt.code+`"`) {
				t.Fatalf("status %d challenge %q; want %d %s (detail: %v)", ae.Status, ae.Challenge, tt.status, tt.code, ae.Detail)
			}
			if !strings.Contains(ae.Challenge, `resource_metadata="`+testMetadata+`"`) || !strings.Contains(ae.Challenge, `scope="mcp:tools"`) {
				t.Fatalf("challenge %q lacks resource_metadata or scope", ae.Challenge)
			}
			if tt.token != "" && len(tt.token) > 20 && strings.Contains(ae.Error(), tt.token[len(tt.token)-20:]) {
				t.Fatal("error detail contains token material")
			}
		})
	}
}

// signRaw signs literal header and claims JSON with the RSA key.
func signRaw(t *testing.T, header, claims string) string {
	input := enc([]byte(header)) + "." + enc([]byte(claims))
	return input + "." + enc(rawSign(t, "RS256", tk(t).rsa, input))
}

// esDER signs valid claims with ES256 but encodes the signature as ASN.1
// DER, which JWS forbids.
func esDER(t *testing.T, _ []string) string {
	input := encJSON(t, map[string]any{"alg": "ES256", "kid": "ec-1"}) + "." + encJSON(t, claims(nil))
	sig, err := tk(t).ec.Sign(nil, sha256Sum(input), crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + enc(sig)
}

// flipLastBits changes the unused low bits of the last base64 character,
// producing a non-canonical encoding of the same bytes.
func flipLastBits(s string) string {
	b, _ := base64.RawURLEncoding.DecodeString(s)
	if len(b)%3 == 0 {
		return s + "A" // an extra character: invalid length
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i^1])
}

func TestOAuthRequestShapes(t *testing.T) {
	a := newTestOAuth(t, nil)
	valid := signJWT(t, "RS256", "rsa-1", tk(t).rsa, claims(nil), nil)
	tests := []struct {
		name      string
		build     func(r *http.Request)
		status    int
		challenge string
	}{
		{"no token", func(r *http.Request) {}, 401,
			`Bearer resource_metadata="` + testMetadata + `", scope="mcp:tools"`},
		{"basic auth", func(r *http.Request) { r.Header.Set("Authorization", "Basic dXNlcjpwYXNz") }, 401,
			`Bearer resource_metadata="` + testMetadata + `", scope="mcp:tools"`},
		{"empty bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") }, 401,
			`Bearer resource_metadata="` + testMetadata + `", scope="mcp:tools", error="invalid_token"`},
		{"token in query", func(r *http.Request) { r.URL.RawQuery = "access_token=" + valid }, 400,
			`Bearer resource_metadata="` + testMetadata + `", scope="mcp:tools", error="invalid_request"`},
		{"token in query and header", func(r *http.Request) {
			r.URL.RawQuery = "access_token=" + valid
			r.Header.Set("Authorization", "Bearer "+valid)
		}, 400, `Bearer resource_metadata="` + testMetadata + `", scope="mcp:tools", error="invalid_request"`},
		{"two Authorization headers", func(r *http.Request) {
			r.Header.Add("Authorization", "Bearer "+valid)
			r.Header.Add("Authorization", "Bearer "+valid)
		}, 400, `Bearer resource_metadata="` + testMetadata + `", scope="mcp:tools", error="invalid_request"`},
		{"lower-case scheme", func(r *http.Request) { r.Header.Set("Authorization", "bearer "+valid) }, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://mcp.example.com/mcp", nil)
			tt.build(r)
			_, err := a.Authenticate(r)
			if tt.status == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ae *authError
			if !errors.As(err, &ae) || ae.Status != tt.status || ae.Challenge != tt.challenge {
				t.Fatalf("got %v (%+v); want %d %q", err, ae, tt.status, tt.challenge)
			}
		})
	}
}

func TestOAuthClockSkewOption(t *testing.T) {
	a := newTestOAuth(t, &OAuthOptions{ClockSkew: time.Second, RequiredScopes: []string{"mcp:tools"}})
	tok := signJWT(t, "RS256", "rsa-1", tk(t).rsa, claims(map[string]any{"exp": testNow.Add(-10 * time.Second).Unix()}), nil)
	if _, err := a.Authenticate(reqWithToken(tok)); !errors.Is(err, errInvalidToken) {
		t.Fatalf("expired beyond 1s skew accepted: %v", err)
	}
}

func TestOAuthNoRequiredScopes(t *testing.T) {
	a := newTestOAuth(t, &OAuthOptions{DefaultPlan: "pro", PlanClaim: "tier"})
	tok := signJWT(t, "RS256", "rsa-1", tk(t).rsa, claims(map[string]any{"scope": nil, "plan": "enterprise"}), nil)
	p, err := a.Authenticate(reqWithToken(tok))
	if err != nil || p.Plan != "pro" {
		t.Fatalf("got %+v, %v; want default plan pro (plan claim is \"tier\")", p, err)
	}
	var ae *authError
	_, err = a.Authenticate(reqWithToken(""))
	if !errors.As(err, &ae) || ae.Challenge != `Bearer resource_metadata="`+testMetadata+`"` {
		t.Fatalf("challenge %q", ae.Challenge)
	}
}

func TestNewOAuthValidates(t *testing.T) {
	set, _ := parseJWKS(publishedSet(t))
	keys := staticJWKS(set)
	tests := []struct {
		name, resource, issuer string
		keys                   *JWKS
		opts                   *OAuthOptions
	}{
		{"no keys", testResource, testIssuer, nil, nil},
		{"no issuer", testResource, "", keys, nil},
		{"http resource", "http://mcp.example.com/mcp", testIssuer, keys, nil},
		{"relative resource", "/mcp", testIssuer, keys, nil},
		{"resource with query", testResource + "?a=b", testIssuer, keys, nil},
		{"resource with fragment", testResource + "#x", testIssuer, keys, nil},
		{"resource with userinfo", "https://u:p@mcp.example.com/mcp", testIssuer, keys, nil},
		{"bad scope", testResource, testIssuer, keys, &OAuthOptions{RequiredScopes: []string{"a b"}}},
		{"offline_access", testResource, testIssuer, keys, &OAuthOptions{ScopesSupported: []string{"offline_access"}}},
		{"skew too large", testResource, testIssuer, keys, &OAuthOptions{ClockSkew: time.Hour}},
		{"negative skew", testResource, testIssuer, keys, &OAuthOptions{ClockSkew: -time.Second}},
		{"bad default plan", testResource, testIssuer, keys, &OAuthOptions{DefaultPlan: "a b"}},
		{"no authorization servers", testResource, testIssuer, keys, &OAuthOptions{AuthorizationServers: []string{}}},
		{"http authorization server", testResource, testIssuer, keys, &OAuthOptions{AuthorizationServers: []string{"http://as.example.com"}}},
		{"issuer not a URL", testResource, "urn:issuer", keys, nil},
	}
	for _, tt := range tests {
		if _, err := NewOAuth(tt.resource, tt.issuer, tt.keys, tt.opts); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	if _, err := NewOAuth("http://127.0.0.1:8931/mcp", testIssuer, keys, nil); err != nil {
		t.Errorf("loopback http resource refused: %v", err)
	}
}

func TestOAuthVerifyDirect(t *testing.T) {
	a := newTestOAuth(t, nil)
	tok := signJWT(t, "EdDSA", "ed-1", tk(t).ed, claims(nil), nil)
	p, err := a.verify(context.Background(), tok)
	if err != nil || p.ID != testIssuer+"|user-42" {
		t.Fatalf("Verify = %+v, %v", p, err)
	}
}

func BenchmarkOAuthVerify(b *testing.B) {
	a := newTestOAuth(b, nil)
	k := tk(b)
	for _, alg := range []struct {
		name, kid string
		key       crypto.Signer
	}{{"RS256", "rsa-1", k.rsa}, {"ES256", "ec-1", k.ec}, {"EdDSA", "ed-1", k.ed}} {
		tok := signJWT(b, alg.name, alg.kid, alg.key, claims(nil), nil)
		b.Run(alg.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := a.verify(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func manyGroups(n int) []string {
	g := make([]string, n)
	for i := range g {
		g[i] = "g" + strconv.Itoa(i)
	}
	return g
}

// TestOAuthGroupsAndScopes: the principal carries the token's groups (the
// configured claim; a string or an array) and its granted scopes (scope
// and scp), sorted and without duplicates, for authorization policies.
func TestOAuthGroupsAndScopes(t *testing.T) {
	k := tk(t)
	rs := func(a *OAuth, c map[string]any) Principal {
		t.Helper()
		p, err := a.Authenticate(reqWithToken(signJWT(t, "RS256", "rsa-1", k.rsa, c, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := newTestOAuth(t, nil)
	def := []string{"mcp:tools", "other"} // claims(nil) grants "mcp:tools other"
	for _, tc := range []struct {
		name           string
		claims         map[string]any
		groups, scopes []string
	}{
		{"none", claims(nil), nil, def},
		{"array", claims(map[string]any{"groups": []string{"ops", "dev", "ops"}}), []string{"dev", "ops"}, def},
		{"string", claims(map[string]any{"groups": "ops team"}), []string{"ops team"}, def},
		{"scope and scp", claims(map[string]any{"scope": "mcp:tools dns:read", "scp": []string{"dns:write", "dns:read"}}), nil, []string{"dns:read", "dns:write", "mcp:tools"}},
		{"256 groups", claims(map[string]any{"groups": manyGroups(256)}), slices.Sorted(slices.Values(manyGroups(256))), def},
	} {
		p := rs(a, tc.claims)
		if !slices.Equal(p.Groups, tc.groups) || !slices.Equal(p.Scopes, tc.scopes) {
			t.Errorf("%s: groups %q scopes %q, want %q %q", tc.name, p.Groups, p.Scopes, tc.groups, tc.scopes)
		}
	}
	roles := newTestOAuth(t, &OAuthOptions{GroupsClaim: "roles", Now: func() time.Time { return testNow }})
	if p := rs(roles, claims(map[string]any{"roles": []string{"admin"}, "groups": []string{"ops"}})); !slices.Equal(p.Groups, []string{"admin"}) {
		t.Errorf("GroupsClaim roles: groups %q", p.Groups)
	}
}
