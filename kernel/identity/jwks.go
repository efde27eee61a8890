package identity

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"

	jose "github.com/go-jose/go-jose/v4"
	josejson "github.com/go-jose/go-jose/v4/json"
)

// Limits on a JWK set. RSA keys above go-jose's jose.MaxRSAModulusBits
// (4096) are refused by go-jose itself.
const (
	maxJWKSKeys    = 100
	minRSABits     = 2048
	defaultJWKSCap = 256 << 10
)

// errJWKS reports a JWK set that cannot be used.
var errJWKS = errors.New("identity: jwks")

var (
	errUnknownKid   = errors.New("no key with the token's kid")
	errAmbiguousKey = errors.New("token has no kid and the key set has several candidate keys")
)

// privateMembers are the JWK members of private or symmetric keys (RFC 7518
// §6), and "priv" of the key types go-jose adds.
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "k", "priv"}

// keySet is a parsed JWK set (RFC 7517) of verification keys: RSA (2048 to
// 4096 bits), EC P-256 and Ed25519. Keys of other types or curves, and keys
// marked for encryption, are skipped. A set that contains private key
// material is refused outright: whoever published it has leaked a key.
// go-jose parses the keys; this type holds bulwark's rules about which may
// be used.
type keySet struct {
	keys []jose.JSONWebKey // Algorithm normalized; "" when the JWK does not say
}

// parseJWKS parses a JWK set document {"keys":[...]}. Duplicate member
// names, anywhere, are refused.
func parseJWKS(data []byte) (*keySet, error) {
	var doc struct {
		Keys []josejson.RawMessage `json:"keys"`
	}
	if err := josejson.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object with a \"keys\" array: %w", errJWKS, err)
	}
	if doc.Keys == nil {
		return nil, fmt.Errorf("%w: \"keys\" is not an array", errJWKS)
	}
	if len(doc.Keys) > maxJWKSKeys {
		return nil, fmt.Errorf("%w: %d keys, at most %d", errJWKS, len(doc.Keys), maxJWKSKeys)
	}
	set := &keySet{}
	for i, r := range doc.Keys {
		k, ok, err := parseJWK(r)
		if err != nil {
			return nil, fmt.Errorf("%w: key %d: %w", errJWKS, i, err)
		}
		if ok {
			set.keys = append(set.keys, k)
		}
	}
	if len(set.keys) == 0 {
		return nil, fmt.Errorf("%w: no usable signature keys", errJWKS)
	}
	return set, nil
}

// Len returns the number of usable keys.
func (s *keySet) Len() int { return len(s.keys) }

// jwkHead is what bulwark reads of a JWK before go-jose parses the key.
type jwkHead struct {
	Kty    string   `json:"kty"`
	Crv    string   `json:"crv"`
	Use    string   `json:"use"`
	Alg    string   `json:"alg"`
	KeyOps []string `json:"key_ops"`
}

// parseJWK parses one key; ok is false for keys this package skips.
func parseJWK(data []byte) (k jose.JSONWebKey, ok bool, err error) {
	var members map[string]josejson.RawMessage
	if err := josejson.Unmarshal(data, &members); err != nil {
		return k, false, fmt.Errorf("not a JSON object: %w", err)
	}
	for _, private := range privateMembers {
		if _, has := members[private]; has {
			return k, false, errors.New("contains private or symmetric key material")
		}
	}
	var h jwkHead
	if err := josejson.Unmarshal(data, &h); err != nil || h.Kty == "" {
		return k, false, errors.New("kty missing, or kty, crv, use, alg or key_ops malformed")
	}
	if !wanted(h) {
		return k, false, nil
	}
	if err := k.UnmarshalJSON(data); err != nil {
		return k, false, fmt.Errorf("%s key: %w", h.Kty, err)
	}
	if err := checkRSA(k.Key); err != nil {
		return k, false, err
	}
	k.Algorithm = normalizeAlg(h.Alg)
	return k, k.Algorithm == "" || compatible(k, k.Algorithm), nil
}

// wanted reports whether a JWK is a signature key of a type, curve and alg
// this package accepts.
func wanted(h jwkHead) bool {
	switch {
	case h.Use != "" && h.Use != "sig", h.KeyOps != nil && !slices.Contains(h.KeyOps, "verify"):
		return false
	case h.Alg != "" && normalizeAlg(h.Alg) == "":
		return false // a key for an algorithm never accepted
	}
	switch h.Kty {
	case "RSA":
		return true
	case "EC":
		return h.Crv == "P-256" // ES384 and ES512 are not accepted
	case "OKP":
		return h.Crv == "Ed25519" // X25519 is for key agreement; Ed448 is not accepted
	}
	return false
}

// checkRSA applies bulwark's floor to RSA keys, on top of go-jose's
// ceiling: at least 2048 bits, an odd exponent from 3 to 2^31-1.
func checkRSA(key any) error {
	pub, ok := key.(*rsa.PublicKey)
	switch {
	case !ok:
		return nil
	case pub.E < 3 || pub.E%2 == 0 || pub.E > 1<<31-1:
		return errors.New("RSA exponent out of range")
	case pub.N.BitLen() < minRSABits:
		return fmt.Errorf("RSA modulus of %d bits, want at least %d", pub.N.BitLen(), minRSABits)
	}
	return nil
}

// compatible reports whether key k may verify a token signed with alg
// (normalized).
func compatible(k jose.JSONWebKey, alg string) bool {
	if k.Algorithm != "" && k.Algorithm != alg {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return alg == algRS256 || alg == algPS256
	case *ecdsa.PublicKey:
		return alg == algES256
	case ed25519.PublicKey:
		return alg == algEdDSA
	}
	return false
}

// lookup selects the key for a token's kid and alg, as go-jose's
// verification key. With a kid, the first compatible key of that kid;
// without one, the only compatible key.
func (s *keySet) lookup(kid, alg string) (any, error) {
	norm := normalizeAlg(alg)
	if norm == "" {
		return nil, errBadAlg
	}
	var found []any
	for _, k := range s.keys {
		if compatible(k, norm) && (kid == "" || k.KeyID == kid) {
			found = append(found, k.Key)
		}
	}
	switch {
	case len(found) == 0 && kid != "":
		return nil, errUnknownKid
	case len(found) == 0:
		return nil, errKeyMismatch
	case kid == "" && len(found) > 1:
		return nil, errAmbiguousKey
	case alg == algEd25519:
		return edName{found[0].(ed25519.PublicKey)}, nil
	}
	return found[0], nil
}
