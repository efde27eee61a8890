package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseJWKS(t *testing.T) {
	k := tk(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaJWK := jwkOf(t, "r", k.rsa.Public(), nil)
	ecJWK := jwkOf(t, "e", k.ec.Public(), nil)
	offCurve := jwkOf(t, "e", k.ec.Public(), map[string]any{"y": ecJWK["x"]})
	tests := []struct {
		name string
		doc  string
		keys int // -1: error
	}{
		{"published", string(publishedSet(t)), 3},
		{"private RSA", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"d": "AQAB"}))), -1},
		{"symmetric", `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`, -1},
		{"RSA 1024", string(jwksJSON(t, jwkOf(t, "r", small.Public(), nil))), -1},
		{"even exponent", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"e": "Ag"}))), -1},
		{"huge exponent", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"e": "AQAAAAE"}))), -1},
		{"P-384 skipped", string(jwksJSON(t, jwkOf(t, "p", p384.Public(), map[string]any{"crv": "P-384"}), rsaJWK)), 1},
		{"enc key skipped", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"use": "enc"}), ecJWK)), 1},
		{"key_ops without verify skipped", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"key_ops": []string{"encrypt"}}), ecJWK)), 1},
		{"HS256 alg skipped", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"alg": "HS256"}), ecJWK)), 1},
		{"alg kty mismatch skipped", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"alg": "ES256"}), ecJWK)), 1},
		{"X25519 skipped", `{"keys":[{"kty":"OKP","crv":"X25519","x":"` + enc(make([]byte, 32)) + `"}]}`, -1},
		{"unknown kty skipped", string(jwksJSON(t, map[string]any{"kty": "XYZ"}, ecJWK)), 1},
		{"point off curve", string(jwksJSON(t, offCurve)), -1},
		{"short EC coordinate", string(jwksJSON(t, jwkOf(t, "e", k.ec.Public(), map[string]any{"x": "AAAA"}))), -1},
		{"short Ed25519", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`, -1},
		{"padded base64", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"e": "AQAB="}))), -1},
		{"kty missing", `{"keys":[{"n":"AQAB","e":"AQAB"}]}`, -1},
		{"kid not string", string(jwksJSON(t, jwkOf(t, "r", k.rsa.Public(), map[string]any{"kid": 5}))), -1},
		{"duplicate member", `{"keys":[{"kty":"OKP","crv":"Ed25519","crv":"X25519","x":"` + enc(make([]byte, 32)) + `"}]}`, -1},
		{"keys not array", `{"keys":{}}`, -1},
		{"keys null", `{"keys":null}`, -1},
		{"no keys member", `{}`, -1},
		{"empty", ``, -1},
		{"array", `[]`, -1},
		{"trailing data", string(publishedSet(t)) + "x", -1},
		{"too many keys", `{"keys":[` + strings.Repeat(`{"kty":"XYZ"},`, 100) + `{"kty":"XYZ"}]}`, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := parseJWKS([]byte(tt.doc))
			if tt.keys < 0 {
				if err == nil || !errors.Is(err, errJWKS) {
					t.Fatalf("accepted (%v)", err)
				}
				return
			}
			if err != nil || set.Len() != tt.keys {
				t.Fatalf("got %v keys, %v; want %d", set, err, tt.keys)
			}
		})
	}
}

func TestKeySetLookupAmbiguous(t *testing.T) {
	k := tk(t)
	set, err := parseJWKS(jwksJSON(t, jwkOf(t, "a", k.rsa.Public(), nil), jwkOf(t, "b", k.rsa2.Public(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.lookup("", "RS256"); !errors.Is(err, errAmbiguousKey) {
		t.Fatalf("no kid with two RSA keys: %v", err)
	}
	if _, err := set.lookup("b", "RS256"); err != nil {
		t.Fatal(err)
	}
	if _, err := set.lookup("b", "HS256"); !errors.Is(err, errBadAlg) {
		t.Fatalf("HS256 lookup: %v", err)
	}
}

// issuer is a JWKS endpoint on 127.0.0.1 whose document can change.
type issuer struct {
	mu     sync.Mutex
	doc    []byte
	status int
	hits   atomic.Int32
	srv    *httptest.Server
}

func newIssuer(t *testing.T, doc []byte) *issuer {
	is := &issuer{doc: doc, status: 200}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.hits.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(is.status)
		w.Write(is.doc)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) set(doc []byte, status int) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.doc, is.status = doc, status
}

type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestJWKSURLCacheAndRotation(t *testing.T) {
	k := tk(t)
	is := newIssuer(t, jwksJSON(t, jwkOf(t, "old", k.rsa.Public(), nil)))
	clock := &stepClock{t: testNow}
	j, err := NewJWKSURL(is.srv.URL+"/jwks", &JWKSOptions{Now: clock.Now, Refresh: 10 * time.Minute, MinRefresh: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if is.hits.Load() != 0 {
		t.Fatal("fetched at construction")
	}
	a, err := NewOAuth(testResource, testIssuer, j, &OAuthOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	auth := func(kid string, key *rsa.PrivateKey) error {
		_, err := a.Authenticate(reqWithToken(signJWT(t, "RS256", kid, key, claims(nil), nil)))
		return err
	}
	step := func(name string, err error, wantOK bool, wantHits int32) {
		t.Helper()
		if (err == nil) != wantOK || is.hits.Load() != wantHits {
			t.Fatalf("%s: err %v, hits %d; want ok=%v hits=%d", name, err, is.hits.Load(), wantOK, wantHits)
		}
	}
	step("first token fetches", auth("old", k.rsa), true, 1)
	step("cached", auth("old", k.rsa), true, 1)

	// Rotation: the issuer publishes a new key; a token with the new kid
	// triggers one early fetch.
	is.set(jwksJSON(t, jwkOf(t, "old", k.rsa.Public(), nil), jwkOf(t, "new", k.rsa2.Public(), nil)), 200)
	clock.Add(2 * time.Minute)
	step("new kid refetches", auth("new", k.rsa2), true, 2)

	// Unknown kids cannot make us hammer the issuer.
	for range 5 {
		step("unknown kid within MinRefresh", auth("bogus", k.rsa), false, 2)
	}
	clock.Add(time.Minute)
	step("unknown kid after MinRefresh", auth("bogus", k.rsa), false, 3)

	// Periodic refresh; a failing issuer leaves the last good set in use.
	is.set([]byte("oops"), 500)
	clock.Add(10 * time.Minute)
	step("refresh fails, stale set serves", auth("new", k.rsa2), true, 4)
	step("no retry within MinRefresh", auth("new", k.rsa2), true, 4)
	clock.Add(25 * time.Hour)
	err = auth("new", k.rsa2)
	var ae *authError
	if !errors.As(err, &ae) || ae.Status != 503 || !errors.Is(err, errKeysUnavailable) || ae.Challenge != "" {
		t.Fatalf("beyond MaxStale: %v", err)
	}
}

func TestJWKSURLUnavailableAtStart(t *testing.T) {
	is := newIssuer(t, nil)
	is.set([]byte("{}"), 404)
	clock := &stepClock{t: testNow}
	j, _ := NewJWKSURL(is.srv.URL, &JWKSOptions{Now: clock.Now})
	a, _ := NewOAuth(testResource, testIssuer, j, &OAuthOptions{Now: clock.Now})
	tok := signJWT(t, "RS256", "rsa-1", tk(t).rsa, claims(nil), nil)
	for range 3 {
		_, err := a.Authenticate(reqWithToken(tok))
		if !errors.Is(err, errKeysUnavailable) {
			t.Fatalf("got %v, want ErrKeysUnavailable", err)
		}
	}
	if is.hits.Load() != 1 {
		t.Fatalf("%d fetches after a failure, want 1", is.hits.Load())
	}
	is.set(publishedSet(t), 200)
	if err := j.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(reqWithToken(tok)); err != nil {
		t.Fatalf("after Refresh: %v", err)
	}
}

func TestJWKSFetchBounds(t *testing.T) {
	big := []byte(`{"keys":[],"pad":"` + strings.Repeat("x", 300<<10) + `"}`)
	redirect := httptest.NewServer(http.RedirectHandler("http://127.0.0.1:1/jwks", http.StatusFound))
	defer redirect.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	tests := []struct {
		name string
		url  string
		opts *JWKSOptions
	}{
		{"too large", newIssuer(t, big).srv.URL, nil},
		{"cap option", newIssuer(t, publishedSet(t)).srv.URL, &JWKSOptions{MaxBytes: 100}},
		{"redirect", redirect.URL, nil},
		{"timeout", slow.URL, &JWKSOptions{Timeout: 50 * time.Millisecond}},
		{"not JSON", newIssuer(t, []byte("<html>")).srv.URL, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := NewJWKSURL(tt.url, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Refresh(context.Background()); err == nil {
				t.Fatal("fetch succeeded")
			}
		})
	}
}

func TestNewJWKSURLValidates(t *testing.T) {
	for _, u := range []string{
		"http://auth.example.com/jwks", "ftp://auth.example.com/jwks", "https://user:pw@auth.example.com/jwks",
		"/jwks", "https://auth.example.com/jwks#frag", "https:opaque", "http://10.0.0.1/jwks", "http://127.0.0.1.evil.com/jwks",
	} {
		if _, err := NewJWKSURL(u, nil); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	for _, u := range []string{"https://auth.example.com/.well-known/jwks.json", "http://127.0.0.1:9/jwks", "http://[::1]:9/jwks", "http://localhost/jwks"} {
		if _, err := NewJWKSURL(u, nil); err != nil {
			t.Errorf("%q refused: %v", u, err)
		}
	}
}

func TestJWKSFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "jwks.json")
	os.WriteFile(good, publishedSet(t), 0o600)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"keys":[]}`), 0o600)
	j, err := NewJWKSFile(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := NewOAuth(testResource, testIssuer, j, &OAuthOptions{Now: func() time.Time { return testNow }})
	if _, err := a.Authenticate(reqWithToken(signJWT(t, "ES256", "ec-1", tk(t).ec, claims(nil), nil))); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bad, filepath.Join(dir, "missing.json")} {
		if _, err := NewJWKSFile(p, nil); !errors.Is(err, errJWKS) {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func ExampleNewJWKSURL() {
	keys, err := NewJWKSURL("https://auth.example.com/.well-known/jwks.json", nil)
	if err != nil {
		panic(err)
	}
	auth, err := NewOAuth("https://mcp.example.com/mcp", "https://auth.example.com", keys,
		&OAuthOptions{RequiredScopes: []string{"mcp:tools"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(auth.MetadataURL())
	// Output: https://mcp.example.com/.well-known/oauth-protected-resource/mcp
}

// TestParseJWKSRSACeiling: go-jose refuses RSA moduli above 4096 bits, so
// a hostile issuer cannot make every verification cost an 8192-bit RSA
// operation; the floor of 2048 bits is bulwark's own check on top.
func TestParseJWKSRSACeiling(t *testing.T) {
	modulus := func(bits int) string {
		n := make([]byte, bits/8)
		n[0], n[len(n)-1] = 0x80, 0x01
		return enc(n)
	}
	for _, tt := range []struct {
		bits int
		ok   bool
	}{{2048, true}, {4096, true}, {4104, false}, {8192, false}, {2040, false}} {
		doc := `{"keys":[{"kty":"RSA","kid":"r","n":"` + modulus(tt.bits) + `","e":"AQAB"}]}`
		set, err := parseJWKS([]byte(doc))
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, errJWKS)) {
			t.Errorf("%d bits: set %v, err %v; want ok=%v", tt.bits, set, err, tt.ok)
		}
	}
}
