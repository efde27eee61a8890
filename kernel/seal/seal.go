// Package seal turns small secrets into opaque, expiring handles that a
// client can hold and hand back but cannot read or forge.
//
// A handle is AES-256-GCM ciphertext under a key derived with HKDF-SHA256
// from one master secret, using the purpose string as the HKDF info. A
// handle sealed for one purpose ("device-grant") therefore cannot be opened
// for another ("cursor"). The expiry travels inside the sealed body, so it is
// authenticated with everything else. A handle may also be bound to a
// principal through the AEAD's associated data: it then opens only for that
// principal.
//
// Wire format (URL-safe base64 without padding):
//
//	version (1 byte) || nonce (12 bytes) || GCM(expiry-unix-ms (8 bytes) || payload) || tag (16 bytes)
//
// Open reports only ErrInvalid or ErrExpired; it never says which part of an
// invalid handle failed. ErrExpired is returned only for handles that
// authenticated, so an expiry cannot be forged or probed.
//
// Nonces are random; with 96-bit random nonces a single key should seal no
// more than about 2^32 handles. Each purpose has its own key, and rotating
// the master secret rotates all of them.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// minKeyLen is the shortest master secret New accepts, in bytes.
const minKeyLen = 32

// defaultMaxPayload is the payload cap used when Options.MaxPayload is zero.
const defaultMaxPayload = 16 << 10

// maxTTL is the longest lifetime a handle may be given.
const maxTTL = 366 * 24 * time.Hour

const (
	version     = 0x01
	nonceLen    = 12
	expiryLen   = 8
	tagLen      = 16
	overhead    = 1 + nonceLen + expiryLen + tagLen
	maxPurposes = 64 // derived keys kept in memory; purposes are code constants
)

var (
	// ErrInvalid means the handle is not one this Sealer issued for the
	// given purpose (and principal): malformed, truncated, tampered with,
	// sealed under another key, purpose or principal. Nothing more is said.
	ErrInvalid = errors.New("seal: invalid handle")
	// ErrExpired means the handle is authentic but its lifetime has passed.
	ErrExpired = errors.New("seal: handle expired")
	// ErrShortKey means the master secret is shorter than 32 bytes (minKeyLen).
	ErrShortKey = errors.New("seal: master key shorter than 32 bytes")
	// ErrWeakKey means the master secret is a single repeated byte.
	ErrWeakKey = errors.New("seal: master key is a repeated byte")
	// ErrPurpose means the purpose string is empty or longer than 255 bytes.
	ErrPurpose = errors.New("seal: purpose must be 1 to 255 bytes")
	// ErrTTL means the lifetime is not positive or exceeds 366 days (maxTTL).
	ErrTTL = errors.New("seal: ttl must be positive and at most maxTTL")
	// ErrTooLarge means the payload exceeds the configured maximum.
	ErrTooLarge = errors.New("seal: payload too large")
)

// Options configures a Sealer. The zero value is usable.
type Options struct {
	// Now returns the current time; nil means time.Now. Tests inject a clock.
	Now func() time.Time
	// MaxPayload caps the payload size in bytes; zero means
	// 16 KiB (defaultMaxPayload). Open rejects longer handles before decoding them.
	MaxPayload int
}

// Sealer seals and opens handles. It is safe for concurrent use.
type Sealer struct {
	master     []byte
	now        func() time.Time
	maxPayload int

	mu   sync.RWMutex
	keys map[string]cipher.AEAD
}

// New returns a Sealer keyed by master, which must hold at least 32
// random bytes. The slice is copied.
func New(master []byte, opts *Options) (*Sealer, error) {
	if len(master) < minKeyLen {
		return nil, ErrShortKey
	}
	if repeated(master) {
		return nil, ErrWeakKey
	}
	s := &Sealer{
		master:     append([]byte(nil), master...),
		now:        time.Now,
		maxPayload: defaultMaxPayload,
		keys:       make(map[string]cipher.AEAD),
	}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	if opts != nil && opts.MaxPayload > 0 {
		s.maxPayload = opts.MaxPayload
	}
	return s, nil
}

// Seal seals payload for purpose, valid for ttl, and returns the handle.
func (s *Sealer) Seal(purpose string, payload []byte, ttl time.Duration) (string, error) {
	return s.seal(purpose, unbound(), payload, ttl)
}

// SealFor is Seal with the handle bound to principal: only OpenFor with the
// same principal opens it. An empty principal is refused, so that a binding
// is never silently absent.
func (s *Sealer) SealFor(purpose, principal string, payload []byte, ttl time.Duration) (string, error) {
	if principal == "" {
		return "", errors.New("seal: empty principal for a bound handle")
	}
	return s.seal(purpose, bound(principal), payload, ttl)
}

// Open returns the payload of a handle sealed by Seal for purpose. It
// returns ErrInvalid or ErrExpired and nothing more specific.
func (s *Sealer) Open(purpose, handle string) ([]byte, error) {
	return s.open(purpose, unbound(), handle)
}

// OpenFor returns the payload of a handle sealed by SealFor for purpose and
// principal. Handles sealed for another principal, or unbound, are
// ErrInvalid.
func (s *Sealer) OpenFor(purpose, principal, handle string) ([]byte, error) {
	if principal == "" {
		return nil, ErrInvalid
	}
	return s.open(purpose, bound(principal), handle)
}

func (s *Sealer) seal(purpose string, ad, payload []byte, ttl time.Duration) (string, error) {
	if ttl <= 0 || ttl > maxTTL {
		return "", ErrTTL
	}
	if len(payload) > s.maxPayload {
		return "", fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(payload), s.maxPayload)
	}
	aead, err := s.key(purpose)
	if err != nil {
		return "", err
	}
	out := make([]byte, 1+nonceLen, overhead+len(payload))
	out[0] = version
	rand.Read(out[1:]) // crypto/rand.Read never returns an error (Go 1.24+)
	body := make([]byte, expiryLen, expiryLen+len(payload))
	binary.BigEndian.PutUint64(body, uint64(s.now().Add(ttl).UnixMilli()))
	body = append(body, payload...)
	out = aead.Seal(out, out[1:1+nonceLen], body, ad)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

func (s *Sealer) open(purpose string, ad []byte, handle string) ([]byte, error) {
	if len(handle) > base64.RawURLEncoding.EncodedLen(overhead+s.maxPayload) {
		return nil, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(handle)
	if err != nil || len(raw) < overhead || raw[0] != version {
		return nil, ErrInvalid
	}
	aead, err := s.key(purpose)
	if err != nil {
		return nil, ErrInvalid
	}
	body, err := aead.Open(nil, raw[1:1+nonceLen], raw[1+nonceLen:], ad)
	if err != nil {
		return nil, ErrInvalid
	}
	expiry := int64(binary.BigEndian.Uint64(body[:expiryLen]))
	if s.now().UnixMilli() >= expiry {
		return nil, ErrExpired
	}
	return body[expiryLen:], nil
}

// key returns the AEAD for purpose, deriving and caching it on first use.
func (s *Sealer) key(purpose string) (cipher.AEAD, error) {
	if purpose == "" || len(purpose) > 255 {
		return nil, ErrPurpose
	}
	s.mu.RLock()
	aead, ok := s.keys[purpose]
	s.mu.RUnlock()
	if ok {
		return aead, nil
	}
	aead, err := derive(s.master, purpose)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.keys) < maxPurposes {
		s.keys[purpose] = aead
	}
	s.mu.Unlock()
	return aead, nil
}

// derive computes the AES-256-GCM key for purpose: HKDF-SHA256 with the
// master secret as input keying material, no salt, and purpose as info.
func derive(master []byte, purpose string) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, master, nil, purpose, 32)
	if err != nil {
		return nil, fmt.Errorf("seal: deriving key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("seal: creating cipher: %w", err)
	}
	return cipher.NewGCM(block)
}

// unbound and bound build the associated data: the format version, a flag
// that says whether a principal is bound, and the principal. An unbound
// handle therefore never opens as a bound one, nor the reverse.
func unbound() []byte { return []byte{version, 0} }

func bound(principal string) []byte {
	return append([]byte{version, 1}, principal...)
}

func repeated(b []byte) bool {
	for _, c := range b[1:] {
		if c != b[0] {
			return false
		}
	}
	return true
}
