// Package httpsyntax holds the kernel's one copy of the RFC 9110 grammar
// rules that more than one kernel package checks.
package httpsyntax

import "strings"

// tchar lists the punctuation RFC 9110 §5.6.2 allows in a token, besides
// ASCII letters and digits.
const tchar = "!#$%&'*+-.^_`|~"

// IsToken reports whether s is an RFC 9110 token (§5.6.2), the grammar of a
// header field name: one or more of ALPHA, DIGIT and tchar.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(tchar, c) >= 0) {
			return false
		}
	}
	return true
}
