// Package tsig holds the TSIG keys (RFC 8945) of bulwark dns: it reads a
// key file once, keeps the secrets out of every printed form, and signs and
// verifies DNS messages with them for miekg/dns (Keyring is an
// mdns.TsigProvider). The rfc2136 provider signs its queries, transfers and
// updates with one key; the local store's hidden primary checks the key of
// each secondary.
//
// Only HMAC-SHA256 and HMAC-SHA512 are accepted: MD5 and SHA-1 are refused
// when the file is read, and a message signed with another algorithm than
// its key's fails verification.
package tsig

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"
)

// Algorithm names as they are written in key files and on the wire.
const (
	HMACSHA256 = "hmac-sha256"
	HMACSHA512 = "hmac-sha512"
)

// Limits on a key file.
const (
	// MaxFileBytes is the largest key file read.
	MaxFileBytes = 64 << 10
	// MaxKeys is the most keys one file may hold.
	MaxKeys = 256
	// MinSecretBytes is the shortest secret accepted (RFC 8945 §6: at
	// least half the hash's length; tsig-keygen makes 32 or 64 bytes).
	MinSecretBytes = 16
	// maxSecretBytes bounds a secret (a block of the hash is 128 bytes at
	// most; longer keys are hashed down by HMAC anyway).
	maxSecretBytes = 512
)

// Errors of Parse and of verification.
var (
	// ErrKeyFile wraps every error Parse reports. Its messages name the
	// line and the problem, never a secret.
	ErrKeyFile = errors.New("tsig: key file")
	// ErrUnknownKey: a message is signed with a key the ring lacks.
	ErrUnknownKey = errors.New("tsig: unknown key")
	// ErrAlgorithm: a message is signed with another algorithm than its
	// key's.
	ErrAlgorithm = errors.New("tsig: algorithm does not match the key")
	// ErrBadSignature: the MAC does not match.
	ErrBadSignature = errors.New("tsig: bad signature")
)

// Key is one TSIG key. Its secret never prints: String and GoString name
// the key and its algorithm only.
type Key struct {
	name   string // canonical: lower case, absolute
	alg    string // HMACSHA256 or HMACSHA512
	secret []byte
}

// Name is the key's name as it appears on the wire ("xfr-key.").
func (k Key) Name() string { return k.name }

// Algorithm is HMACSHA256 or HMACSHA512.
func (k Key) Algorithm() string { return k.alg }

// WireAlgorithm is the algorithm as miekg/dns names it (mdns.HmacSHA256).
func (k Key) WireAlgorithm() string { return mdns.Fqdn(k.alg) }

// SecretBase64 is the secret as the key file wrote it, for the one use a
// server has for it besides signing: registering it with the kernel's
// scrubber, so that it can never leave in a result.
func (k Key) SecretBase64() string { return base64.StdEncoding.EncodeToString(k.secret) }

// String names the key without its secret.
func (k Key) String() string {
	return fmt.Sprintf("TSIG key %s (%s)", strings.TrimSuffix(k.name, "."), k.alg)
}

// GoString is String: %#v never shows the secret either.
func (k Key) GoString() string { return k.String() }

// NewKey makes a key from its parts: a name, an algorithm (hmac-sha256 or
// hmac-sha512) and the base64 secret.
func NewKey(name, algorithm, secretB64 string) (Key, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || len(name) > 253 || !validName(name) {
		return Key{}, fmt.Errorf("%w: key name %q is not a domain name", ErrKeyFile, bound(name))
	}
	alg := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(algorithm)), ".")
	if alg != HMACSHA256 && alg != HMACSHA512 {
		return Key{}, fmt.Errorf("%w: key %s: algorithm %q is not hmac-sha256 or hmac-sha512", ErrKeyFile, bound(name), bound(alg))
	}
	secret, err := base64.StdEncoding.DecodeString(strings.TrimSpace(secretB64))
	if err != nil {
		return Key{}, fmt.Errorf("%w: key %s: the secret is not base64", ErrKeyFile, bound(name))
	}
	if len(secret) < MinSecretBytes || len(secret) > maxSecretBytes {
		return Key{}, fmt.Errorf("%w: key %s: the secret has %d bytes; want %d to %d (tsig-keygen makes them)", ErrKeyFile, bound(name), len(secret), MinSecretBytes, maxSecretBytes)
	}
	return Key{name: mdns.Fqdn(name), alg: alg, secret: secret}, nil
}

// validName checks a key name: labels of letters, digits, '-' and '_'.
func validName(name string) bool {
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Keyring is a set of keys by name. It is an mdns.TsigProvider: it signs
// with, and verifies against, the key a message's TSIG record names, and
// only with that key's algorithm.
type Keyring struct {
	keys map[string]Key
}

var _ mdns.TsigProvider = (*Keyring)(nil)

// NewKeyring holds keys; a name given twice is an error.
func NewKeyring(keys ...Key) (*Keyring, error) {
	r := &Keyring{keys: make(map[string]Key, len(keys))}
	for _, k := range keys {
		if _, dup := r.keys[k.name]; dup {
			return nil, fmt.Errorf("%w: key %s is given twice", ErrKeyFile, bound(k.name))
		}
		r.keys[k.name] = k
	}
	return r, nil
}

// Key returns the key named name (case and a final dot do not matter).
func (r *Keyring) Key(name string) (Key, bool) {
	if r == nil {
		return Key{}, false
	}
	k, ok := r.keys[mdns.Fqdn(strings.ToLower(name))]
	return k, ok
}

// Keys returns the keys, sorted by name.
func (r *Keyring) Keys() []Key {
	if r == nil {
		return nil
	}
	out := make([]Key, 0, len(r.keys))
	for _, k := range r.keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Key) int { return strings.Compare(a.name, b.name) })
	return out
}

// Len is the number of keys.
func (r *Keyring) Len() int {
	if r == nil {
		return 0
	}
	return len(r.keys)
}

// mac is the HMAC of msg under the key t names, with t's algorithm, which
// must be the key's.
func (r *Keyring) mac(msg []byte, t *mdns.TSIG) ([]byte, error) {
	k, ok := r.Key(t.Hdr.Name)
	if !ok {
		return nil, ErrUnknownKey
	}
	if strings.TrimSuffix(strings.ToLower(t.Algorithm), ".") != k.alg {
		return nil, ErrAlgorithm
	}
	var h hash.Hash
	if k.alg == HMACSHA512 {
		h = hmac.New(sha512.New, k.secret)
	} else {
		h = hmac.New(sha256.New, k.secret)
	}
	h.Write(msg)
	return h.Sum(nil), nil
}

// Generate signs msg (mdns.TsigProvider).
func (r *Keyring) Generate(msg []byte, t *mdns.TSIG) ([]byte, error) { return r.mac(msg, t) }

// Verify checks msg's MAC in constant time (mdns.TsigProvider).
func (r *Keyring) Verify(msg []byte, t *mdns.TSIG) error {
	want, err := r.mac(msg, t)
	if err != nil {
		return err
	}
	got, err := hex.DecodeString(t.MAC)
	if err != nil || !hmac.Equal(got, want) {
		return ErrBadSignature
	}
	return nil
}

// bound cuts a name for an error message.
func bound(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
