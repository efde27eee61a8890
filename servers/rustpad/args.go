package rustpad

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/session"
)

// Bounds of the tools' arguments (reference §13, src/schema.ts).
const (
	maxIDLen       = 100
	maxLanguageLen = 50
	// maxTextLen caps a text argument in code points: the server's document
	// cap. What a write may add is checked against the pad's length too.
	maxTextLen = session.DefaultMaxDocument
	// maxShown cuts user names and the language in results (rustpad-mcp's
	// 100 characters); the envelope cleans them.
	maxShown = 100
)

const (
	idPattern       = `^[A-Za-z0-9._-]+$`
	languagePattern = `^[A-Za-z0-9+#.-]+$`
)

// Arguments of the tools.
type (
	padArgs struct {
		ID string `json:"id" jsonschema:"the pad id: 1-100 characters of A-Z a-z 0-9 . _ - (the part after # in the pad's URL)"`
	}
	statsArgs  struct{}
	createArgs struct {
		ID       string `json:"id,omitempty" jsonschema:"the pad id; omitted: a random 12-character id"`
		Text     string `json:"text,omitempty" jsonschema:"initial text"`
		Language string `json:"language,omitempty" jsonschema:"editor language, e.g. markdown, python, rust"`
	}
	setArgs struct {
		ID   string `json:"id" jsonschema:"the pad id"`
		Text string `json:"text" jsonschema:"the new text; it replaces everything in the pad"`
	}
	appendArgs struct {
		ID   string `json:"id" jsonschema:"the pad id"`
		Text string `json:"text" jsonschema:"the text to add at the end (include a leading newline if you want one)"`
	}
	replaceArgs struct {
		ID         string `json:"id" jsonschema:"the pad id"`
		Search     string `json:"search" jsonschema:"the exact text to find (literal, case-sensitive)"`
		Replace    string `json:"replace" jsonschema:"the text to put in its place (may be empty)"`
		ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence; otherwise the search text must occur exactly once"`
	}
	languageArgs struct {
		ID       string `json:"id" jsonschema:"the pad id"`
		Language string `json:"language" jsonschema:"the editor language, e.g. markdown, python, rust, plaintext"`
	}
)

// invalid is the tool error for an argument that breaks a rule.
func invalid(arg, format string, args ...any) *kernel.Error {
	return kernel.Errorf(kernel.InvalidArgument, "Invalid argument %q: %s.", arg, fmt.Sprintf(format, args...)).
		WithHint("Correct the argument and call the tool again.")
}

// checkID re-checks a pad id before any URL is built (the schema checked it
// already; handlers never trust that alone).
func checkID(id string) error {
	if err := session.ValidatePadID(id); err != nil {
		return invalid("id", "a pad id is 1-%d characters of A-Z a-z 0-9 . _ - and not . or ..", maxIDLen)
	}
	return nil
}

// checkText checks a text argument: valid UTF-8 (the JSON layer already
// turned lone surrogates into U+FFFD) and at most maxTextLen code points.
// It returns the length in code points.
func checkText(arg, text string, min int) (int, error) {
	if !utf8.ValidString(text) {
		return 0, invalid(arg, "not valid UTF-8")
	}
	n := utf8.RuneCountInString(text)
	switch {
	case n < min:
		return 0, invalid(arg, "must not be empty")
	case n > maxTextLen:
		return 0, invalid(arg, "%d characters, at most %d allowed", n, maxTextLen)
	}
	return n, nil
}

// checkLanguage checks a language and returns it in lower case.
func checkLanguage(lang string) (string, error) {
	if lang == "" || len(lang) > maxLanguageLen {
		return "", invalid("language", "must be 1-%d characters", maxLanguageLen)
	}
	for _, c := range []byte(lang) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("+#.-", c) >= 0
		if !ok {
			return "", invalid("language", "only letters, digits and + # . - are allowed")
		}
	}
	return strings.ToLower(lang), nil
}

// Struct tags give the schemas their descriptions; patterns and bounds are
// added here, to the schema the kernel generated, and checked again in the
// handlers.

var (
	idRule       = argschema.All(argschema.Pattern(idPattern), argschema.MinLen(1), argschema.MaxLen(maxIDLen))
	languageRule = argschema.All(argschema.Pattern(languagePattern), argschema.MinLen(1), argschema.MaxLen(maxLanguageLen))
	textRule     = argschema.MaxLen(maxTextLen)
	nonEmptyText = argschema.All(argschema.MinLen(1), argschema.MaxLen(maxTextLen))
)
