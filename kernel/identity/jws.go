package identity

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// Signature algorithms accepted for access tokens. "none" and the HMAC
// family are never accepted: a resource server holds no shared secret, and
// HS256 "verified" with a public key is the classic key-confusion forgery.
const (
	AlgRS256 = "RS256"
	AlgPS256 = "PS256"
	AlgES256 = "ES256"
	AlgEdDSA = "EdDSA"
)

var b64 = base64.RawURLEncoding.Strict()

var (
	errMalformedJWS = errors.New("malformed compact JWS")
	errBadAlg       = errors.New("unsupported or forbidden alg")
	errBadSignature = errors.New("signature does not verify")
	errKeyMismatch  = errors.New("key type does not match alg")
)

// jws is a parsed, not yet verified, compact JWS.
type jws struct {
	alg, kid     string
	claims       map[string]json.RawMessage
	signingInput string
	sig          []byte
}

// parseJWS splits and decodes a compact JWS of at most maxLen bytes. It
// checks structure only; the signature is checked by verifySignature.
func parseJWS(token string, maxLen int) (*jws, error) {
	if len(token) > maxLen {
		return nil, fmt.Errorf("%w: longer than %d bytes", errMalformedJWS, maxLen)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: %d parts, want 3", errMalformedJWS, len(parts))
	}
	hdr, err := decodePart(parts[0])
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", errMalformedJWS, err)
	}
	payload, err := decodePart(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %w", errMalformedJWS, err)
	}
	sig, err := decodePart(parts[2])
	if err != nil {
		return nil, fmt.Errorf("%w: signature: %w", errMalformedJWS, err)
	}
	t := &jws{signingInput: parts[0] + "." + parts[1], sig: sig}
	if err := t.parseHeader(hdr); err != nil {
		return nil, err
	}
	if t.claims, err = decodeObject(payload); err != nil {
		return nil, fmt.Errorf("%w: claims: %w", errMalformedJWS, err)
	}
	return t, nil
}

func decodePart(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	b, err := b64.DecodeString(s)
	if err != nil {
		return nil, errors.New("not base64url without padding")
	}
	return b, nil
}

// parseHeader reads alg, kid and typ. Critical extensions, unencoded
// payloads (b64) and compression are refused.
func (t *jws) parseHeader(data []byte) error {
	h, err := decodeObject(data)
	if err != nil {
		return fmt.Errorf("%w: header: %w", errMalformedJWS, err)
	}
	for _, name := range []string{"crit", "b64", "zip", "enc"} {
		if _, ok := h[name]; ok {
			return fmt.Errorf("%w: header member %q is not supported", errMalformedJWS, name)
		}
	}
	var typ string
	if err := stringMember(h, "alg", &t.alg, true); err != nil {
		return err
	}
	if err := stringMember(h, "kid", &t.kid, false); err != nil {
		return err
	}
	if err := stringMember(h, "typ", &typ, false); err != nil {
		return err
	}
	switch strings.ToLower(typ) {
	case "", "jwt", "at+jwt", "application/at+jwt":
		return nil
	}
	return fmt.Errorf("%w: typ is not JWT or at+jwt", errMalformedJWS)
}

// stringMember decodes the string member name of obj into dst.
func stringMember(obj map[string]json.RawMessage, name string, dst *string, required bool) error {
	raw, ok := obj[name]
	if !ok {
		if required {
			return fmt.Errorf("%w: %q missing", errMalformedJWS, name)
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%w: %q is not a string", errMalformedJWS, name)
	}
	return nil
}

// decodeObject decodes a JSON object into its members, refusing duplicate
// names (which different parsers resolve differently) and trailing data.
// Member names are kept exactly: no case folding.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	obj := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("invalid JSON")
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errors.New("invalid JSON")
		}
		if _, dup := obj[name]; dup {
			return nil, errors.New("duplicate member name")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New("invalid JSON")
		}
		obj[name] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("invalid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return obj, nil
}

// normalizeAlg maps accepted algorithm names to their canonical form; it
// returns "" for anything not accepted. "Ed25519" (RFC 9864) is EdDSA with
// the only curve this package accepts.
func normalizeAlg(alg string) string {
	switch alg {
	case AlgRS256, AlgPS256, AlgES256, AlgEdDSA:
		return alg
	case "Ed25519":
		return AlgEdDSA
	}
	return ""
}

// verifySignature checks sig over input with key under alg. The key's type
// must match the alg exactly.
func verifySignature(alg string, key crypto.PublicKey, input string, sig []byte) error {
	switch normalizeAlg(alg) {
	case AlgRS256, AlgPS256:
		return verifyRSA(alg, key, input, sig)
	case AlgES256:
		return verifyES256(key, input, sig)
	case AlgEdDSA:
		pub, ok := key.(ed25519.PublicKey)
		if !ok || len(pub) != ed25519.PublicKeySize {
			return errKeyMismatch
		}
		if !ed25519.Verify(pub, []byte(input), sig) {
			return errBadSignature
		}
		return nil
	}
	return errBadAlg
}

func verifyRSA(alg string, key crypto.PublicKey, input string, sig []byte) error {
	pub, ok := key.(*rsa.PublicKey)
	if !ok {
		return errKeyMismatch
	}
	digest := sha256.Sum256([]byte(input))
	var err error
	if alg == AlgRS256 {
		err = rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig)
	} else {
		err = rsa.VerifyPSS(pub, crypto.SHA256, digest[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	}
	if err != nil {
		return errBadSignature
	}
	return nil
}

func verifyES256(key crypto.PublicKey, input string, sig []byte) error {
	pub, ok := key.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		return errKeyMismatch
	}
	if len(sig) != 64 {
		return errBadSignature
	}
	digest := sha256.Sum256([]byte(input))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return errBadSignature
	}
	return nil
}
