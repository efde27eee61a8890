// Package errorid makes the ids that tie an error a client sees to the log
// record that holds its detail. The kernel's tool errors and identity's
// authentication refusals use this one format, so an operator searches the
// log the same way for both.
package errorid

import (
	"crypto/rand"
	"encoding/hex"
)

// idLen is the length of an id.
const idLen = 16

// Pattern is a regular expression that matches one id, for tests that
// hide ids from golden files.
const Pattern = `[0-9a-f]{16}`

// New returns a fresh random id: 64 bits from crypto/rand as idLen lowercase
// hex digits.
func New() string {
	var b [idLen / 2]byte
	rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	return hex.EncodeToString(b[:])
}
