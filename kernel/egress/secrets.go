package egress

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// MinSecretLen is the shortest secret the gate removes safely: a shorter
// value would also match ordinary words and identifiers. CheckSecret refuses
// shorter values where they enter (configuration, sign-in), so that none is
// silently left unscrubbed.
const MinSecretLen = 12

// minCutPrefix is the shortest secret prefix removed before a cut marker.
const minCutPrefix = 4

// ErrShortSecret is CheckSecret's error for a value under MinSecretLen
// bytes. It never holds the value.
var ErrShortSecret = fmt.Errorf("a secret must be at least %d bytes long to be removed safely from what clients receive", MinSecretLen)

// ErrEmptySecret is CheckSecret's error for an empty or blank value.
var ErrEmptySecret = errors.New("a secret must not be empty")

// ErrSecretUTF8 is CheckSecret's error for a value that is not UTF-8.
var ErrSecretUTF8 = errors.New("a secret must be UTF-8 text")

// CheckSecret reports whether v can be registered as a secret: UTF-8, not
// blank, and at least MinSecretLen bytes long. The error never quotes v.
func CheckSecret(v string) error {
	switch {
	case !utf8.ValidString(v):
		return ErrSecretUTF8
	case strings.TrimSpace(v) == "":
		return ErrEmptySecret
	case len(v) < MinSecretLen:
		return ErrShortSecret
	}
	return nil
}

// Secrets is an immutable set of secret values, with what is needed to find
// each of them: the value and, for values of MinSecretLen bytes or more, the
// part of its base64 encodings (standard and URL alphabets) that does not
// depend on its neighbours, at each of the three offsets it can start at
// inside a longer base64 text. The zero value and nil hold nothing.
//
// A Secrets never prints its values: fmt shows only how many it holds.
type Secrets struct {
	values []string
	m      *matcher
}

// NewSecrets returns the set of the non-empty values. Values shorter than
// MinSecretLen are kept and looked for as they are (never base64); callers
// refuse them first with CheckSecret where they can. Values that are not
// UTF-8 are looked for byte for byte.
func NewSecrets(values ...string) *Secrets {
	return (*Secrets)(nil).With(values...)
}

// With returns a set that also holds values; s is unchanged. It returns s
// itself when values adds nothing.
func (s *Secrets) With(values ...string) *Secrets {
	var kept []string
	if s != nil {
		kept = s.values
	}
	added := false
	for _, v := range values {
		if v == "" || slices.Contains(kept, v) {
			continue
		}
		if !added {
			kept = slices.Clone(kept)
			added = true
		}
		kept = append(kept, v)
	}
	if !added {
		return s
	}
	return &Secrets{values: kept, m: newMatcher(forms(kept))}
}

// Union returns a set holding the values of s and t.
func (s *Secrets) Union(t *Secrets) *Secrets {
	switch {
	case t.Len() == 0:
		return s
	case s.Len() == 0:
		return t
	}
	return s.With(t.values...)
}

// shortest is the length of the shortest form the set looks for; a text
// shorter than it holds none (a nil set: more than any text).
func (s *Secrets) shortest() int {
	if s.Len() == 0 {
		return math.MaxInt
	}
	return s.m.shortest
}

// Len is how many values the set holds.
func (s *Secrets) Len() int {
	if s == nil {
		return 0
	}
	return len(s.values)
}

// String shows the number of values, never a value.
func (s *Secrets) String() string { return fmt.Sprintf("egress.Secrets{%d values}", s.Len()) }

// GoString is String, for %#v.
func (s *Secrets) GoString() string { return s.String() }

// forms returns what is looked for, longest first.
func forms(values []string) [][]byte {
	var out [][]byte
	add := func(f []byte) {
		if len(f) > 0 && !slices.ContainsFunc(out, func(g []byte) bool { return string(f) == string(g) }) {
			out = append(out, f)
		}
	}
	for _, v := range values {
		add([]byte(v))
		if len(v) < MinSecretLen {
			continue
		}
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for k := range 3 {
				add(base64Core(enc, v, k))
			}
		}
	}
	slices.SortStableFunc(out, func(a, b []byte) int { return len(b) - len(a) })
	return out
}

// base64Core is the part of the base64 encoding of v, preceded by k other
// bytes, that depends on v alone: it is found inside any base64 text that
// encodes v at an offset of k modulo 3 (an "Authorization: Basic" value
// echoed back, say). For a value of MinSecretLen bytes it is at least 14
// characters long, too long to match by chance.
func base64Core(enc *base64.Encoding, v string, k int) []byte {
	buf := make([]byte, k+len(v))
	copy(buf[k:], v)
	s := enc.EncodeToString(buf)
	first, last := (8*k+5)/6, 8*(k+len(v))/6
	return []byte(s[first:last])
}
