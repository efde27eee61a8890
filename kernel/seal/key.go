package seal

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// errKeyEncoding means a master key string is neither hex nor base64.
var errKeyEncoding = errors.New("seal: master key is neither hex nor base64")

// ParseKey decodes a master secret as it is kept in an environment variable
// or a key file (for example MCP_AEAD_KEY): hex, or standard or URL-safe
// base64 with or without padding. Surrounding white space is ignored. It
// returns ErrShortKey when fewer than 32 bytes result, and
// ErrWeakKey for a repeated byte. Error messages never contain the input.
//
// Generate a key with, for example, `openssl rand -base64 32`.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	key, err := decodeKey(s)
	if err != nil {
		return nil, err
	}
	if len(key) < minKeyLen {
		return nil, ErrShortKey
	}
	if repeated(key) {
		return nil, ErrWeakKey
	}
	return key, nil
}

func decodeKey(s string) ([]byte, error) {
	// A string of hex digits is read as hex: base64 of random bytes is
	// practically never made of hex digits alone.
	if b, err := hex.DecodeString(s); err == nil && s != "" {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding,
		base64.URLEncoding, base64.RawURLEncoding,
	} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errKeyEncoding
}
