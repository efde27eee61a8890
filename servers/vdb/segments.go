package vdb

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Every argument that becomes a URL path segment is checked here against
// its own grammar before any request is built; the outbound client then
// checks the whole URL once more (checkAPIURL).

// grammar is the form of one kind of path-segment argument: ASCII letters
// and digits, plus the punctuation in punct, 1 to max bytes.
type grammar struct {
	punct string
	max   int
}

// The grammars of path-segment arguments.
var (
	// tokenGrammar: product and vendor names, versions, releases, package
	// names of most ecosystems (PyPI, Cargo, NuGet, Maven's group:artifact,
	// Debian's 1:2.3+dfsg-1 versions).
	tokenGrammar = grammar{punct: "._-+~:", max: maxArgLen}
	// npmGrammar: one part of an npm name (the scope without "@", or the
	// name), as npm allows them: URL-safe characters only.
	npmGrammar = grammar{punct: "._-~", max: 214}
	// groupGrammar: a Maven group id.
	groupGrammar = grammar{punct: "._-", max: maxArgLen}
)

func (g grammar) holds(v string) bool {
	if v == "" || len(v) > g.max {
		return false
	}
	for _, c := range []byte(v) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(g.punct, c) >= 0) {
			return false
		}
	}
	return true
}

func (g grammar) describe() string {
	return "letters, digits and " + strings.Join(strings.Split(g.punct, ""), " ")
}

// maxNameParts is the most "/"-separated parts of a namespaced package name
// (a Go module path, a Composer vendor/package).
const maxNameParts = 6

// namespaced are the ecosystems whose package names hold "/": the name
// travels as one path segment with the slash escaped, as the CLI sends it,
// each part checked.
var namespaced = []string{"go", "golang", "packagist", "composer", "github-actions", "swift"}

// unescaped percent-decodes v as often as a lenient server would, stopping
// at the first malformed encoding.
func unescaped(v string) string {
	for range maxDecodeRounds {
		d, err := url.PathUnescape(v)
		if err != nil || d == v {
			return v
		}
		v = d
	}
	return v
}

// unsafeSegment names what makes v unfit to be one path segment whatever
// its grammar, checking v both as given and percent-decoded: "" when
// nothing does.
func unsafeSegment(v string) string {
	for _, s := range []string{unescaped(v), v} {
		switch {
		case s == "":
			return "it is empty"
		case s == "." || s == "..":
			return "it is a dot segment (also when percent-encoded), which would climb the path"
		case strings.ContainsRune(s, '/'):
			return "it holds a slash (also when percent-encoded), which would add path segments"
		case strings.ContainsFunc(s, unsafeInPath):
			return "it holds a semicolon, a backslash, a percent-encoding, \"?\", \"#\" or a control character"
		}
	}
	return ""
}

// checkSegment refuses an argument that cannot be the path segment its
// grammar describes, with an invalid_argument error naming the argument.
func checkSegment(name, v string, g grammar) error {
	if why := unsafeSegment(v); why != "" {
		return kernel.Errorf(kernel.InvalidArgument, "%s is refused as a path segment: %s.", name, why).
			WithHint("Give the plain name, without path syntax or encodings.")
	}
	if !g.holds(v) {
		return kernel.Errorf(kernel.InvalidArgument, "%s must be 1 to %d characters: %s.", name, g.max, g.describe())
	}
	return nil
}

// checkEcosystem refuses an ecosystem that is not one of the fixed list.
func checkEcosystem(name, e string) error {
	if !slices.Contains(ecosystems, e) {
		return kernel.Errorf(kernel.InvalidArgument, "%s must be one of %s.", name, strings.Join(ecosystems, ", "))
	}
	return nil
}

// packageParts checks a package name for ecosystem eco and returns its
// parts: an npm "@scope/name" gives "@scope" and "name", each checked; a
// name of a namespaced ecosystem gives its "/"-separated parts, each
// checked; any other name gives itself.
func packageParts(name, eco, v string) ([]string, error) {
	switch {
	case eco == "npm" && strings.HasPrefix(v, "@"):
		scope, rest, ok := strings.Cut(v[1:], "/")
		if !ok {
			return nil, kernel.Errorf(kernel.InvalidArgument, "%s: a scoped npm name is @scope/name.", name)
		}
		if err := checkSegment(name+"'s scope", scope, npmGrammar); err != nil {
			return nil, err
		}
		if err := checkSegment(name, rest, npmGrammar); err != nil {
			return nil, err
		}
		return []string{"@" + scope, rest}, nil
	case eco == "npm":
		return []string{v}, checkSegment(name, v, npmGrammar)
	case slices.Contains(namespaced, eco):
		parts := strings.Split(v, "/")
		if len(parts) > maxNameParts {
			return nil, kernel.Errorf(kernel.InvalidArgument, "%s has more than %d parts.", name, maxNameParts)
		}
		for _, p := range parts {
			if err := checkSegment(name, p, tokenGrammar); err != nil {
				return nil, err
			}
		}
		return parts, nil
	}
	return []string{v}, checkSegment(name, v, tokenGrammar)
}

// packageSegment is a checked package name as one path segment: the
// parts joined by "/", which apiPath escapes (as the CLI does).
func packageSegment(name, eco, v string) (string, error) {
	parts, err := packageParts(name, eco, v)
	return strings.Join(parts, "/"), err
}

// checkDate refuses a date that is not YYYY-MM-DD.
func checkDate(name, v string) error {
	if t, err := time.Parse(time.DateOnly, v); err != nil || t.Format(time.DateOnly) != v {
		return kernel.Errorf(kernel.InvalidArgument, "%s must be a date, YYYY-MM-DD.", name)
	}
	return nil
}
