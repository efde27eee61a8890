package identity

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// Limits on a JWK set.
const (
	maxJWKSKeys    = 100
	minRSABits     = 2048
	maxRSABits     = 8192
	defaultJWKSCap = 256 << 10
)

// ErrJWKS reports a JWK set that cannot be used.
var ErrJWKS = errors.New("identity: jwks")

var (
	errUnknownKid   = errors.New("no key with the token's kid")
	errAmbiguousKey = errors.New("token has no kid and the key set has several candidate keys")
)

// jwk is one usable verification key.
type jwk struct {
	kid, alg string // alg normalized; "" when the JWK does not say
	kty      string
	key      crypto.PublicKey
}

// KeySet is a parsed JWK set (RFC 7517) of verification keys: RSA (2048 to
// 8192 bits), EC P-256 and Ed25519. Keys of other types or curves, and keys
// marked for encryption, are skipped. A set that contains private key
// material is refused outright: whoever published it has leaked a key.
type KeySet struct {
	keys []jwk
}

// ParseJWKS parses a JWK set document {"keys":[...]}.
func ParseJWKS(data []byte) (*KeySet, error) {
	doc, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJWKS, err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(doc["keys"], &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("%w: \"keys\" is not an array", ErrJWKS)
	}
	if len(raw) > maxJWKSKeys {
		return nil, fmt.Errorf("%w: %d keys, at most %d", ErrJWKS, len(raw), maxJWKSKeys)
	}
	set := &KeySet{}
	for i, r := range raw {
		k, ok, err := parseJWK(r)
		if err != nil {
			return nil, fmt.Errorf("%w: key %d: %w", ErrJWKS, i, err)
		}
		if ok {
			set.keys = append(set.keys, k)
		}
	}
	if len(set.keys) == 0 {
		return nil, fmt.Errorf("%w: no usable signature keys", ErrJWKS)
	}
	return set, nil
}

// Len returns the number of usable keys.
func (s *KeySet) Len() int { return len(s.keys) }

// parseJWK parses one key; ok is false for keys this package skips.
func parseJWK(data []byte) (k jwk, ok bool, err error) {
	m, err := decodeObject(data)
	if err != nil {
		return k, false, err
	}
	for _, private := range []string{"d", "p", "q", "dp", "dq", "qi", "k"} {
		if _, has := m[private]; has {
			return k, false, errors.New("contains private or symmetric key material")
		}
	}
	var use, alg string
	var ops []string
	if err := firstErr(stringMember(m, "kty", &k.kty, true), stringMember(m, "kid", &k.kid, false),
		stringMember(m, "use", &use, false), stringMember(m, "alg", &alg, false)); err != nil {
		return k, false, errors.New("kty, kid, use or alg is malformed")
	}
	if raw, has := m["key_ops"]; has && json.Unmarshal(raw, &ops) != nil {
		return k, false, errors.New("key_ops is not an array of strings")
	}
	if (use != "" && use != "sig") || (ops != nil && !slices.Contains(ops, "verify")) {
		return k, false, nil
	}
	if alg != "" {
		if k.alg = normalizeAlg(alg); k.alg == "" {
			return k, false, nil // a key for an algorithm never accepted
		}
	}
	switch k.kty {
	case "RSA":
		k.key, err = rsaKey(m)
	case "EC":
		k.key, err = ecKey(m)
	case "OKP":
		k.key, err = okpKey(m)
	}
	if k.key == nil || err != nil {
		return k, false, err
	}
	return k, compatible(k, k.alg) || k.alg == "", nil
}

func rsaKey(m map[string]json.RawMessage) (crypto.PublicKey, error) {
	n, err := b64Member(m, "n")
	if err != nil {
		return nil, err
	}
	e, err := b64Member(m, "e")
	if err != nil {
		return nil, err
	}
	if len(e) == 0 || len(e) > 4 {
		return nil, errors.New("RSA exponent out of range")
	}
	exp := new(big.Int).SetBytes(e).Int64()
	if exp < 3 || exp%2 == 0 || exp > 1<<31-1 {
		return nil, errors.New("RSA exponent out of range")
	}
	mod := new(big.Int).SetBytes(n)
	if bits := mod.BitLen(); bits < minRSABits || bits > maxRSABits {
		return nil, fmt.Errorf("RSA modulus of %d bits, want %d to %d", bits, minRSABits, maxRSABits)
	}
	return &rsa.PublicKey{N: mod, E: int(exp)}, nil
}

func ecKey(m map[string]json.RawMessage) (crypto.PublicKey, error) {
	var crv string
	if err := stringMember(m, "crv", &crv, true); err != nil {
		return nil, errors.New("EC key without crv")
	}
	if crv != "P-256" {
		return nil, nil // skipped: ES384 and ES512 are not accepted
	}
	x, err := b64Member(m, "x")
	if err != nil {
		return nil, err
	}
	y, err := b64Member(m, "y")
	if err != nil {
		return nil, err
	}
	if len(x) != 32 || len(y) != 32 {
		return nil, errors.New("P-256 coordinates must be 32 bytes")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, errors.New("P-256 point is not on the curve")
	}
	return pub, nil
}

func okpKey(m map[string]json.RawMessage) (crypto.PublicKey, error) {
	var crv string
	if err := stringMember(m, "crv", &crv, true); err != nil {
		return nil, errors.New("OKP key without crv")
	}
	if crv != "Ed25519" {
		return nil, nil // skipped: X25519 is for key agreement, Ed448 not accepted
	}
	x, err := b64Member(m, "x")
	if err != nil {
		return nil, err
	}
	if len(x) != ed25519.PublicKeySize {
		return nil, errors.New("Ed25519 key must be 32 bytes")
	}
	return ed25519.PublicKey(x), nil
}

func b64Member(m map[string]json.RawMessage, name string) ([]byte, error) {
	var s string
	if err := stringMember(m, name, &s, true); err != nil {
		return nil, fmt.Errorf("member %q missing or not a string", name)
	}
	b, err := b64.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("member %q is not base64url", name)
	}
	return b, nil
}

// compatible reports whether key k may verify a token signed with alg
// (normalized).
func compatible(k jwk, alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch alg {
	case AlgRS256, AlgPS256:
		return k.kty == "RSA"
	case AlgES256:
		return k.kty == "EC"
	case AlgEdDSA:
		return k.kty == "OKP"
	}
	return false
}

// lookup selects the key for a token's kid and alg. With a kid, the first
// compatible key of that kid; without one, the only compatible key.
func (s *KeySet) lookup(kid, alg string) (crypto.PublicKey, error) {
	alg = normalizeAlg(alg)
	if alg == "" {
		return nil, errBadAlg
	}
	var found []crypto.PublicKey
	for _, k := range s.keys {
		if compatible(k, alg) && (kid == "" || k.kid == kid) {
			found = append(found, k.key)
		}
	}
	switch {
	case len(found) == 0 && kid != "":
		return nil, errUnknownKid
	case len(found) == 0:
		return nil, errKeyMismatch
	case kid == "" && len(found) > 1:
		return nil, errAmbiguousKey
	}
	return found[0], nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
