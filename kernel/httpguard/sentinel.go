package httpguard

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The SEP-2243 Base64 sentinel wrapping header values that are not safe
// plain ASCII. The markers are lowercase and case-sensitive.
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// decodeHeaderValue returns the value a mirrored MCP header (Mcp-Name,
// Mcp-Param-*) stands for. A value of the form =?base64?<Base64>?= is
// decoded (standard alphabet with padding, canonical, and the result must be
// UTF-8); any other value must be safe plain ASCII (0x20-0x7E, no leading or
// trailing space or tab) and is returned as is. Errors wrap
// errInvalidHeaderValue.
func decodeHeaderValue(v string) (string, error) {
	if len(v) >= len(sentinelPrefix)+len(sentinelSuffix) &&
		strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		return decodeSentinel(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
	}
	if needsHeaderEncoding(v) {
		return "", fmt.Errorf("plain value with characters that need the base64 form: %w", errInvalidHeaderValue)
	}
	return v, nil
}

func decodeSentinel(enc string) (string, error) {
	for i := 0; i < len(enc); i++ { // DecodeString would skip CR and LF
		c := enc[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return "", fmt.Errorf("base64 sentinel with a byte outside the alphabet: %w", errInvalidHeaderValue)
		}
	}
	b, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return "", fmt.Errorf("base64 sentinel does not decode: %w", errInvalidHeaderValue)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("base64 sentinel is not UTF-8: %w", errInvalidHeaderValue)
	}
	return string(b), nil
}

// needsHeaderEncoding reports whether s must travel in the Base64 sentinel
// form: it holds a byte outside 0x20-0x7E, starts or ends with a space or a
// tab, or itself looks like the sentinel.
func needsHeaderEncoding(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, sentinelPrefix) && strings.HasSuffix(s, sentinelSuffix)
}

// EncodeHeaderValue is decodeHeaderValue's inverse: s itself when it is safe
// plain ASCII, else its Base64 sentinel form. Use it when a request is
// forwarded over the wire after headerAgreement rewrote Mcp-Name.
func EncodeHeaderValue(s string) string {
	if !needsHeaderEncoding(s) {
		return s
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(s)) + sentinelSuffix
}
