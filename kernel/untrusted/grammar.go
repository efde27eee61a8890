package untrusted

import (
	"mime"
	"strings"
)

// maxMediaType and maxURI bound the metadata an upstream can put in a
// content block.
const (
	maxMediaType = 255
	maxURI       = 2048
)

// MediaType returns s as a media type (RFC 6838: type "/" subtype, each a
// restricted name, with RFC 2045 parameters) in its normal form, and
// whether it is one. An upstream's mimeType that is not is dropped by the
// kernel, never shown to a model: it is a field a client reads as a type,
// not text.
func MediaType(s string) (string, bool) {
	if s == "" || len(s) > maxMediaType {
		return "", false
	}
	mt, params, err := mime.ParseMediaType(s)
	if err != nil {
		return "", false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || !restrictedName(typ) || !restrictedName(sub) {
		return "", false
	}
	for _, v := range params {
		if !plainASCII(v) {
			return "", false
		}
	}
	out := mime.FormatMediaType(mt, params)
	return out, out != ""
}

// restrictedName is RFC 6838's restricted-name: an ALPHA or DIGIT, then up
// to 126 ALPHA, DIGIT, "!", "#", "$", "&", "-", "^", "_", "." or "+".
func restrictedName(s string) bool {
	if s == "" || len(s) > 127 || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !alnum(c) && !strings.ContainsRune("!#$&-^_.+", rune(c)) {
			return false
		}
	}
	return true
}

// URI reports whether s is a URI as RFC 3986 writes one: a scheme (an
// ALPHA, then ALPHA, DIGIT, "+", "-" or "."), a colon, and only unreserved
// and reserved characters or percent-encodings after it; at most 2048
// bytes. No space, control or non-ASCII character: an upstream's URI that
// is not one is replaced by the kernel, never shown to a model.
func URI(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 || len(s) > maxURI || !alpha(s[0]) {
		return false
	}
	for i := 1; i < colon; i++ {
		if c := s[i]; !alnum(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	for i := colon + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !hexDigit(s[i+1]) || !hexDigit(s[i+2]) {
				return false
			}
			i += 2
		case alnum(c) || strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func alpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func alnum(c byte) bool { return alpha(c) || '0' <= c && c <= '9' }
func hexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
