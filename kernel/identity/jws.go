package identity

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// Signature algorithms accepted for access tokens. "none" and the HMAC
// family are never accepted: a resource server holds no shared secret, and
// HS256 "verified" with a public key is the classic key-confusion forgery.
const (
	algRS256 = "RS256"
	algPS256 = "PS256"
	algES256 = "ES256"
	algEdDSA = "EdDSA"
)

// algEd25519 is RFC 9864's fully-specified name for EdDSA on Ed25519, the
// only EdDSA curve accepted. go-jose does not know the name; see edName.
const algEd25519 = "Ed25519"

// acceptedAlgs is the allowlist go-jose parses tokens against: a token
// whose alg is not in it is refused before any key is looked up.
var acceptedAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.ES256, jose.EdDSA, algEd25519}

var b64 = base64.RawURLEncoding.Strict()

var (
	errMalformedJWS = errors.New("malformed compact JWS")
	errBadAlg       = errors.New("unsupported or forbidden alg")
	errBadSignature = errors.New("signature does not verify")
	errKeyMismatch  = errors.New("key type does not match alg")
)

// parseJWS parses a compact JWS of at most maxLen bytes with go-jose, and
// refuses on top what go-jose tolerates: base64url with non-zero unused
// bits (a second encoding of the same bytes), critical extensions,
// unencoded payloads (b64), compression and encryption members, and a typ
// other than JWT or at+jwt. go-jose itself refuses duplicate member names,
// a non-string alg or kid, and any alg outside acceptedAlgs. The signature
// is checked by verifyJWS. Errors are this package's fixed values: they
// never quote the token.
func parseJWS(token string, maxLen int) (*jose.JSONWebSignature, error) {
	if len(token) > maxLen {
		return nil, fmt.Errorf("%w: longer than %d bytes", errMalformedJWS, maxLen)
	}
	for seg := range strings.SplitSeq(token, ".") {
		if _, err := b64.DecodeString(seg); err != nil || seg == "" {
			return nil, fmt.Errorf("%w: a part is empty or not canonical base64url without padding", errMalformedJWS)
		}
	}
	sig, err := jose.ParseSignedCompact(token, acceptedAlgs)
	var unexpected *jose.ErrUnexpectedSignatureAlgorithm
	switch {
	case errors.As(err, &unexpected):
		return nil, errBadAlg
	case err != nil:
		return nil, fmt.Errorf("%w: not three parts, or a header that is not a JSON object of well-formed members", errMalformedJWS)
	}
	if err := checkHeader(sig.Signatures[0].Protected); err != nil {
		return nil, err
	}
	return sig, nil
}

// checkHeader refuses header members bulwark does not support.
func checkHeader(h jose.Header) error {
	for _, name := range []jose.HeaderKey{"crit", "b64", "zip", "enc"} {
		if _, ok := h.ExtraHeaders[name]; ok {
			return fmt.Errorf("%w: header member %q is not supported", errMalformedJWS, name)
		}
	}
	typ, ok := h.ExtraHeaders["typ"].(string)
	if _, present := h.ExtraHeaders["typ"]; present && !ok {
		return fmt.Errorf("%w: typ is not a string", errMalformedJWS)
	}
	switch strings.ToLower(typ) {
	case "", "jwt", "at+jwt", "application/at+jwt":
		return nil
	}
	return fmt.Errorf("%w: typ is not JWT or at+jwt", errMalformedJWS)
}

// verifyJWS checks the signature with key (from keySet.lookup) and returns
// the payload.
func verifyJWS(sig *jose.JSONWebSignature, key any) ([]byte, error) {
	payload, err := sig.Verify(key)
	if err != nil {
		return nil, errBadSignature
	}
	return payload, nil
}

// normalizeAlg maps accepted algorithm names to their canonical form; it
// returns "" for anything not accepted. "Ed25519" (RFC 9864) is EdDSA with
// the only curve this package accepts.
func normalizeAlg(alg string) string {
	switch alg {
	case algRS256, algPS256, algES256, algEdDSA:
		return alg
	case algEd25519:
		return algEdDSA
	}
	return ""
}

// edName verifies a token whose alg is RFC 9864's "Ed25519": go-jose
// verifies Ed25519 signatures only under the name "EdDSA", and the
// signature is the same.
type edName struct{ key ed25519.PublicKey }

// VerifyPayload implements jose.OpaqueVerifier.
func (v edName) VerifyPayload(payload, sig []byte, alg jose.SignatureAlgorithm) error {
	if alg != algEd25519 || !ed25519.Verify(v.key, payload, sig) {
		return errBadSignature
	}
	return nil
}
