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
// HTML (by Content-Type text/html or application/xhtml+xml, a body whose
// first non-space character is '<', or markup anywhere in it — see
// hasMarkup) becomes HTMLDropped; invalid UTF-8 is
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
	if strings.HasPrefix(s, "<") || hasMarkup(s) {
		return HTMLDropped
	}
	return strings.TrimFunc(cutRunes(s, MaxErrorTextRunes), invisible)
}

// invisible reports space and format characters (BOM, zero-width joiners,
// bidi marks), which must not hide a leading '<' from the HTML check.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)
}

// hasMarkup reports markup anywhere in s: a closing tag ("</name"), a
// declaration or comment ("<!"), a processing instruction ("<?name"), or an
// opening tag ("<name" ending in '>' before the next '<'). Invisible
// characters between '<' and the name do not hide it. A lone '<' in prose
// ("x < y", "a<b then") is not markup.
func hasMarkup(s string) bool {
	for i := strings.IndexByte(s, '<'); i >= 0; {
		rest := skipInvisible(s[i+1:])
		if markupAt(rest) {
			return true
		}
		j := strings.IndexByte(s[i+1:], '<')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// markupAt reports whether rest, the text after a '<', starts markup.
func markupAt(rest string) bool {
	if rest == "" {
		return false
	}
	switch c := rest[0]; {
	case c == '!':
		return true
	case c == '/' || c == '?':
		return len(rest) > 1 && isLetter(skipInvisible(rest[1:]))
	case !isLetter(rest):
		return false
	}
	n := 1
	for n < len(rest) && (isLetter(rest[n:]) || rest[n] >= '0' && rest[n] <= '9' || rest[n] == '-' || rest[n] == ':') {
		n++
	}
	if n == len(rest) {
		return false
	}
	switch rest[n] {
	case '>':
		return true
	case ' ', '\t', '\n', '\r', '/':
		end := strings.IndexAny(rest[n:], "<>")
		return end >= 0 && rest[n+end] == '>'
	}
	return false
}

func isLetter(s string) bool {
	return s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// skipInvisible drops leading format characters (zero-width, BOM, bidi).
func skipInvisible(s string) string {
	return strings.TrimLeftFunc(s, func(r rune) bool { return unicode.Is(unicode.Cf, r) })
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
