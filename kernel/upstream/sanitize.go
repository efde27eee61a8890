package upstream

import (
	"mime"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxErrorTextRunes is how many characters of upstream error text survive
// SanitizeErrorBody; longer text is cut and ends in "…".
const MaxErrorTextRunes = 2000

// HTMLDropped replaces an HTML error page (a proxy's or a WAF's): its markup
// is useless to a model and a vehicle for injected text.
const HTMLDropped = "HTML error page from upstream (dropped)"

// SanitizeErrorBody turns an upstream error body into bounded plain text:
// HTML (by Content-Type text/html or application/xhtml+xml, or a body whose
// first non-space character is '<') becomes HTMLDropped; invalid UTF-8 is
// replaced; control characters other than tab and newline become spaces;
// leading and trailing space and format characters (BOM, zero-width) are
// trimmed; the result is cut to MaxErrorTextRunes characters. An empty or
// all-space body gives "".
func SanitizeErrorBody(contentType string, body []byte) string {
	if isHTMLType(contentType) {
		return HTMLDropped
	}
	return SanitizeErrorMessage(string(body))
}

// SanitizeErrorMessage applies SanitizeErrorBody's rules to a message taken
// from a structured (JSON) error, whose content type says nothing about it.
func SanitizeErrorMessage(msg string) string {
	s := strings.Map(replaceControl, strings.ToValidUTF8(msg, "\uFFFD"))
	s = strings.TrimFunc(s, invisible)
	if strings.HasPrefix(s, "<") {
		return HTMLDropped
	}
	return strings.TrimFunc(cutRunes(s, MaxErrorTextRunes), invisible)
}

// invisible reports space and format characters (BOM, zero-width joiners,
// bidi marks), which must not hide a leading '<' from the HTML check.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)
}

func isHTMLType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(contentType)
		return strings.Contains(mt, "html")
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

func replaceControl(r rune) rune {
	if r == '\t' || r == '\n' {
		return r
	}
	if unicode.IsControl(r) {
		return ' '
	}
	return r
}

// cutRunes keeps at most max runes of s; a cut string ends in "…" (counted).
func cutRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
