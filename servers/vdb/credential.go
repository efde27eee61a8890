package vdb

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

// Credential schemes, as the audit record names them (attrScheme).
const (
	schemeAPIKey = "apikey"
	schemeBearer = "bearer"
)

// maxCredential caps a credential's length.
const maxCredential = 4096

// credential is an upstream credential ready to send. The server splits it
// only to recover its scheme; it never checks it (only vdb-api can).
type credential struct {
	header string // the Authorization value
	scheme string
	// cacheID names the credential in cache keys: a digest of the whole
	// header, so that a forged key naming another organisation never
	// shares that organisation's cached answers.
	cacheID string
	stored  bool // it came from a sign-in, not the configuration
	// secrets are the parts registered with the call (kernel.Call.
	// RegisterSecrets), so that the egress gate removes each from
	// everything the client receives: the header value, the credential
	// after its scheme, and an ApiKey's digest alone.
	secrets []string
}

// String hides the value from every printer.
func (credential) String() string { return "[redacted]" }

var errBadCredential = errors.New("malformed credential")

// parseCredential turns a configured or relayed value into a credential:
// "ApiKey <org>:<hex>", "Bearer <token>", a bare "<org>:<hex>" (an ApiKey,
// as the console shows it) or a bare token (Bearer). A doubled org prefix
// ("<org>:<org>:<hex>", pasted from the console) is stripped, as the CLI does.
func parseCredential(v string) (credential, error) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxCredential {
		return credential{}, errBadCredential
	}
	scheme, rest := "", v
	if i := strings.IndexByte(v, ' '); i > 0 {
		switch strings.ToLower(v[:i]) {
		case "apikey":
			scheme = schemeAPIKey
		case "bearer":
			scheme = schemeBearer
		default:
			return credential{}, errBadCredential
		}
		rest = strings.TrimSpace(v[i+1:])
	}
	for _, c := range []byte(rest) {
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return credential{}, errBadCredential
		}
	}
	if rest == "" {
		return credential{}, errBadCredential
	}
	if scheme == "" {
		scheme = schemeBearer
		if strings.Count(rest, ":") >= 1 && looksLikeOrg(rest[:strings.IndexByte(rest, ':')]) {
			scheme = schemeAPIKey
		}
	}
	if scheme == schemeAPIKey {
		if parts := strings.SplitN(rest, ":", 3); len(parts) == 3 && parts[0] == parts[1] {
			rest = parts[1] + ":" + parts[2]
		}
	}
	h := "Bearer " + rest
	if scheme == schemeAPIKey {
		h = "ApiKey " + rest
	}
	sum := sha256.Sum256([]byte(h))
	c := credential{header: h, scheme: scheme, cacheID: hex.EncodeToString(sum[:16]), secrets: []string{h, rest}}
	if _, digest, ok := strings.Cut(rest, ":"); ok && scheme == schemeAPIKey {
		c.secrets = append(c.secrets, digest)
	}
	for _, part := range c.secrets[1:] {
		// a part too short to be removed from answers safely would leave
		// the credential unscrubbed: such a credential is refused
		if egress.CheckSecret(part) != nil {
			return credential{}, errBadCredential
		}
	}
	return c, nil
}

// looksLikeOrg reports a UUID-shaped organisation id.
func looksLikeOrg(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range []byte(s) {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// errMalformed is the refusal of a credential given malformed.
func errMalformed() *kernel.Error {
	return kernel.Errorf(kernel.Unauthenticated, "The Vulnetix credential given is malformed; no other credential was used in its place.").
		WithHint("Give \"ApiKey <org>:<key>\" (or the key as the console shows it) or \"Bearer <token>\": in VULNETIX_API_KEY over stdio, " +
			"in one X-Vulnetix-Authorization header per request over HTTP; or send no header to use the key you signed in with.")
}

// signInHint names every way to give the server a credential.
func (s *Server) signInHint() string {
	h := "Set VULNETIX_API_KEY (or -api-key-file) where the server runs over stdio, or send " +
		"\"X-Vulnetix-Authorization: ApiKey <org>:<key>\" (or \"Bearer <token>\") with each request when it serves HTTP"
	if s.sealer != nil {
		h += ", or sign in with vdb_auth_start and vdb_auth_poll"
	}
	return h + "."
}

// credentialFor finds the call's credential: the configured or relayed one,
// else — only when none was given at all — the key a sign-in stored for
// the principal. A credential given malformed (a relayed header sent twice
// or not in the shape of credentials, or a value that is neither an ApiKey
// nor a Bearer token) is refused as such: it is never replaced by the
// stored key, which would answer with another identity's data.
func (s *Server) credentialFor(call *kernel.Call) (credential, error) {
	v, err := s.cred(call)
	if err != nil {
		var ke *kernel.Error
		switch {
		case errors.Is(err, kernel.ErrMalformedCredential):
			return credential{}, errMalformed().WithCause(err)
		case !errors.As(err, &ke) || ke.Code != kernel.Unauthenticated:
			return credential{}, err
		}
		v = ""
	}
	if v != "" {
		c, perr := parseCredential(v)
		if perr != nil {
			return credential{}, errMalformed()
		}
		call.RegisterSecrets(c.secrets...)
		return c, nil
	}
	if s.keys != nil {
		key, ok, err := s.keys.Get(call.Principal.ID)
		if err != nil {
			return credential{}, sharedStoreErr(call, err)
		}
		if ok {
			c, perr := parseCredential("ApiKey " + key)
			if perr == nil {
				c.stored = true
				call.RegisterSecrets(c.secrets...)
				return c, nil
			}
		}
	}
	return credential{}, kernel.Errorf(kernel.Unauthenticated, "No Vulnetix credential: this server has no built-in or anonymous access.").
		WithHint("%s", s.signInHint())
}
