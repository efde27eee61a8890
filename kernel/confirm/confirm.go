// Package confirm issues and redeems confirmation tokens: the second step a
// client must take before a gated tool acts.
//
// The first call of a gated tool is refused with a random single-use token.
// The token is bound to the principal, the tool, the target and the SHA-256 of
// the canonical payload: it confirms that exact call and nothing else. A call
// with a wrong, expired, reused, other-principal or other-payload token is
// refused (the caller gets a fresh token), and such an attempt does not spend
// the token that is still pending.
//
// A token proves a deliberate second step by the client. It is not human
// consent: the authorization boundary is the MCP host's permission prompt.
package confirm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"time"
)

// Defaults of the Issuer's zero options.
const (
	DefaultTTL        = 5 * time.Minute
	DefaultMaxPending = 32
	tokenBytes        = 18 // 144 bits from crypto/rand
)

// ErrRefused is returned by Redeem for every token that does not confirm the
// call: unknown, expired, spent, or bound to something else. The reason is not
// told apart on purpose.
var ErrRefused = errors.New("confirmation token does not match this call")

// Binding is what a token confirms.
type Binding struct {
	Principal string
	Tool      string
	// Target identifies what the call acts on (canonical JSON of the target
	// fields, or a canonical key the tool computed).
	Target string
	// Payload is the SHA-256 of the canonical payload; zero when the tool
	// binds no payload.
	Payload [32]byte
}

// digest folds a binding into one hash, each part length-prefixed.
func (b Binding) digest() [32]byte {
	h := sha256.New()
	for _, s := range []string{b.Principal, b.Tool, b.Target} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		io.WriteString(h, s)
	}
	h.Write(b.Payload[:])
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// Pending is a token waiting to be redeemed, as a Store keeps it. The token
// itself is never stored: only its SHA-256.
type Pending struct {
	TokenHash [32]byte
	Principal string
	Digest    [32]byte
	Expires   time.Time
}

// A Store keeps pending tokens. Implementations must make Redeem atomic: a
// token is spent at most once, across every process that shares the store.
type Store interface {
	// Put records p, evicting the principal's oldest pending tokens beyond max.
	Put(ctx context.Context, p Pending, max int) error
	// Redeem spends the token whose hash is tokenHash if it belongs to
	// principal, matches digest and has not expired at now. It reports whether
	// it did; a token that does not match stays pending.
	Redeem(ctx context.Context, principal string, tokenHash, digest [32]byte, now time.Time) (bool, error)
}

// Options configure an Issuer. The zero value is usable.
type Options struct {
	// TTL is how long a token stays valid; DefaultTTL when zero.
	TTL time.Duration
	// MaxPending caps the pending tokens per principal, oldest evicted;
	// DefaultMaxPending when zero.
	MaxPending int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Rand is the source of token bytes; crypto/rand when nil. Tests only.
	Rand io.Reader
}

// Issuer issues and redeems tokens over a Store.
type Issuer struct {
	store Store
	opts  Options
}

// NewIssuer returns an Issuer over store (a new memory store when nil).
func NewIssuer(store Store, opts *Options) *Issuer {
	if store == nil {
		store = NewMemoryStore()
	}
	i := &Issuer{store: store}
	if opts != nil {
		i.opts = *opts
	}
	if i.opts.TTL <= 0 {
		i.opts.TTL = DefaultTTL
	}
	if i.opts.MaxPending <= 0 {
		i.opts.MaxPending = DefaultMaxPending
	}
	if i.opts.Now == nil {
		i.opts.Now = time.Now
	}
	if i.opts.Rand == nil {
		i.opts.Rand = rand.Reader
	}
	return i
}

// TTL is how long issued tokens stay valid.
func (i *Issuer) TTL() time.Duration { return i.opts.TTL }

// Issue returns a fresh token for b.
func (i *Issuer) Issue(ctx context.Context, b Binding) (string, error) {
	raw := make([]byte, tokenBytes)
	if _, err := io.ReadFull(i.opts.Rand, raw); err != nil {
		return "", err
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	p := Pending{TokenHash: sha256.Sum256([]byte(tok)), Principal: b.Principal, Digest: b.digest(), Expires: i.opts.Now().Add(i.opts.TTL)}
	if err := i.store.Put(ctx, p, i.opts.MaxPending); err != nil {
		return "", err
	}
	return tok, nil
}

// Redeem spends token if it confirms b, and returns ErrRefused otherwise. An
// error of the store is returned as it is: the caller must fail closed.
func (i *Issuer) Redeem(ctx context.Context, b Binding, token string) error {
	if token == "" || len(token) > 256 {
		return ErrRefused
	}
	ok, err := i.store.Redeem(ctx, b.Principal, sha256.Sum256([]byte(token)), b.digest(), i.opts.Now())
	if err != nil {
		return err
	}
	if !ok {
		return ErrRefused
	}
	return nil
}
