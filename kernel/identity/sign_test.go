package identity

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"sync"
	"testing"
)

// Test-only JWT signer and JWK encoder. Keys are generated once per test
// binary; nothing here is used outside tests.

type testKeys struct {
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
	ed  ed25519.PrivateKey
	// other keys of the same types, never published
	rsa2 *rsa.PrivateKey
	ec2  *ecdsa.PrivateKey
}

var (
	keysOnce sync.Once
	keys     testKeys
)

func tk(t testing.TB) testKeys {
	t.Helper()
	keysOnce.Do(func() {
		var errs [4]error
		keys.rsa, errs[0] = rsa.GenerateKey(rand.Reader, 2048)
		keys.rsa2, errs[1] = rsa.GenerateKey(rand.Reader, 2048)
		keys.ec, errs[2] = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		keys.ec2, errs[3] = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		_, keys.ed, _ = ed25519.GenerateKey(rand.Reader)
		for _, err := range errs {
			if err != nil {
				panic(err)
			}
		}
	})
	return keys
}

func enc(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func encJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return enc(b)
}

// signJWT signs claims with key under alg; header members in extra are
// merged into the header ({"alg","kid","typ":"JWT"} by default).
func signJWT(t testing.TB, alg, kid string, key crypto.Signer, claims map[string]any, extra map[string]any) string {
	t.Helper()
	hdr := map[string]any{"alg": alg, "typ": "JWT"}
	if kid != "" {
		hdr["kid"] = kid
	}
	for k, v := range extra {
		if v == nil {
			delete(hdr, k)
		} else {
			hdr[k] = v
		}
	}
	input := encJSON(t, hdr) + "." + encJSON(t, claims)
	return input + "." + enc(rawSign(t, alg, key, input))
}

func rawSign(t testing.TB, alg string, key crypto.Signer, input string) []byte {
	t.Helper()
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	var err error
	switch alg {
	case "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA256, digest[:])
	case "PS256":
		sig, err = rsa.SignPSS(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case "ES256":
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, key.(*ecdsa.PrivateKey), digest[:])
		if err == nil {
			sig = make([]byte, 64)
			r.FillBytes(sig[:32])
			s.FillBytes(sig[32:])
		}
	case "EdDSA", "Ed25519":
		sig = ed25519.Sign(key.(ed25519.PrivateKey), []byte(input))
	default:
		t.Fatalf("test signer: alg %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// hs256WithPublicKey forges the key-confusion token: HMAC-SHA256 keyed
// with the DER of the RSA public key.
func hs256WithPublicKey(t testing.TB, pub *rsa.PublicKey, kid string, claims map[string]any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	input := encJSON(t, map[string]any{"alg": "HS256", "kid": kid, "typ": "JWT"}) + "." + encJSON(t, claims)
	mac := hmac.New(sha256.New, der)
	mac.Write([]byte(input))
	return input + "." + enc(mac.Sum(nil))
}

// jwkOf returns the public JWK of key.
func jwkOf(t testing.TB, kid string, pub crypto.PublicKey, extra map[string]any) map[string]any {
	t.Helper()
	var m map[string]any
	switch k := pub.(type) {
	case *rsa.PublicKey:
		m = map[string]any{"kty": "RSA", "n": enc(k.N.Bytes()), "e": enc(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		b, err := k.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		m = map[string]any{"kty": "EC", "crv": "P-256", "x": enc(b[1:33]), "y": enc(b[33:])}
	case ed25519.PublicKey:
		m = map[string]any{"kty": "OKP", "crv": "Ed25519", "x": enc(k)}
	default:
		t.Fatalf("jwkOf: %T", pub)
	}
	if kid != "" {
		m["kid"] = kid
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func jwksJSON(t testing.TB, keys ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// publishedSet is the JWKS the tests' issuer publishes.
func publishedSet(t testing.TB) []byte {
	k := tk(t)
	return jwksJSON(t,
		jwkOf(t, "rsa-1", k.rsa.Public(), map[string]any{"use": "sig"}),
		jwkOf(t, "ec-1", k.ec.Public(), map[string]any{"alg": "ES256"}),
		jwkOf(t, "ed-1", k.ed.Public(), nil),
	)
}

func sha256Sum(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}
