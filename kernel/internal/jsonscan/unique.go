package jsonscan

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// CheckUnique checks that data is one JSON value (DefaultMaxDepth) in which
// no object, at any depth, repeats a key. Keys are compared after decoding,
// so "a" and "\u0061" are the same key. Different decoders keep different
// copies of a repeated key (the first, the last, or both), so a document
// that repeats one can be read two ways; the kernel refuses such input
// wherever it acts on it. Errors: ErrSyntax, ErrDepth, ErrUTF8,
// ErrDuplicateKey.
func CheckUnique(data []byte) error {
	s := Scanner{Data: data}
	if err := s.walk(0, true); err != nil {
		return err
	}
	if !s.AtEnd() {
		return ErrSyntax
	}
	return nil
}

// check adds key, refusing a key that is not UTF-8 (decoders differ on
// what it is) or that the set already holds.
func (k *KeySet) check(key []byte) error {
	if !utf8.Valid(key) {
		return ErrUTF8
	}
	if !k.Add(key) {
		return &DuplicateKeyError{Key: string(key)}
	}
	return nil
}

// DuplicateKeyError names the key CheckUnique found twice; it matches
// ErrDuplicateKey.
type DuplicateKeyError struct{ Key string }

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("jsonscan: duplicate object key %.64q", e.Key)
}

// Is reports whether target is ErrDuplicateKey.
func (e *DuplicateKeyError) Is(target error) bool { return target == ErrDuplicateKey }

// smallSet is how many keys a KeySet compares one by one before it builds a
// map: most objects are small, and a map would cost more than it saves.
const smallSet = 16

// KeySet remembers the keys of one object. The zero value is empty. Its
// first keys are kept in an array inside it (no pointer to itself, so a
// KeySet on the stack stays there): a small object costs no allocation.
type KeySet struct {
	first [8][]byte
	n     int      // keys in first
	list  [][]byte // keys after first's, up to smallSet in all
	m     map[string]struct{}
}

// Reset empties the set, keeping its memory for the next object.
func (k *KeySet) Reset() {
	clear(k.first[:k.n])
	clear(k.list)
	k.n, k.list, k.m = 0, k.list[:0], nil
}

// Add adds key and reports whether it was new. The set keeps key itself,
// so the caller must not change it afterwards.
func (k *KeySet) Add(key []byte) bool {
	if k.m != nil {
		if _, dup := k.m[string(key)]; dup {
			return false
		}
		k.m[string(key)] = struct{}{}
		return true
	}
	for _, have := range k.first[:k.n] {
		if bytes.Equal(have, key) {
			return false
		}
	}
	for _, have := range k.list {
		if bytes.Equal(have, key) {
			return false
		}
	}
	switch {
	case k.n < len(k.first):
		k.first[k.n] = key
		k.n++
		return true
	case k.n+len(k.list) < smallSet:
		k.list = append(k.list, key)
		return true
	}
	k.m = make(map[string]struct{}, 2*smallSet)
	for _, have := range k.first[:k.n] {
		k.m[string(have)] = struct{}{}
	}
	for _, have := range k.list {
		k.m[string(have)] = struct{}{}
	}
	clear(k.first[:k.n])
	clear(k.list)
	k.n, k.list = 0, nil
	k.m[string(key)] = struct{}{}
	return true
}
