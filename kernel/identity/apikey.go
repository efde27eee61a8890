package identity

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// Limits of the API-key file and of a presented key.
const (
	maxKeyFileBytes = 1 << 20
	maxKeyLineBytes = 1024
	maxAPIKeyBytes  = 1024
)

// errKeyFile reports a malformed API-key file. Messages name the line
// number, never the line: a line that is not a hash may be a raw key.
var errKeyFile = errors.New("identity: api key file")

var errUnknownKey = errors.New("api key matches no entry")

type keyEntry struct {
	hash   [sha256.Size]byte
	plan   string
	id     string
	groups []string
}

// APIKeys authenticates bearer API keys against SHA-256 hashes. Keys are
// never held in clear. It accepts the key as "Authorization: Bearer <key>"
// or "X-API-Key: <key>" (both present and different is a 400). It is safe
// for concurrent use.
type APIKeys struct {
	entries []keyEntry
}

// HashKey returns the lowercase hex SHA-256 of key: the form the key file
// stores. Keys should be long random strings (for example
// `openssl rand -base64 32`); a fast hash is then enough.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// LoadAPIKeys reads an API-key file; see ParseAPIKeys for the format.
func LoadAPIKeys(path string) (*APIKeys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errKeyFile, err)
	}
	defer f.Close()
	keys, err := ParseAPIKeys(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// ParseAPIKeys reads lines of the form
//
//	<sha256-hex-of-key> <plan> [<id>] [groups=<group>,<group>...]
//
// Blank lines and lines starting with # are skipped. The plan is 1-64
// characters of [A-Za-z0-9._-]; the id is 1-128 characters of
// [A-Za-z0-9._@:+-] and defaults to "key-" and the first 12 hex digits of
// the hash. The optional groups (at most 32, each 1-128 characters of
// [A-Za-z0-9._@:+-]) become the principal's Groups, for authorization
// policies. Several hashes may share an id (key rotation); a hash may
// appear only once. A file with no keys is an error.
func ParseAPIKeys(r io.Reader) (*APIKeys, error) {
	lr := &io.LimitedReader{R: r, N: maxKeyFileBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 256), maxKeyLineBytes)
	k := &APIKeys{}
	seen := make(map[[sha256.Size]byte]int)
	n := 0
	for sc.Scan() {
		n++
		e, ok, err := parseKeyLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", errKeyFile, n, err)
		}
		if !ok {
			continue
		}
		if first, dup := seen[e.hash]; dup {
			return nil, fmt.Errorf("%w: line %d: same key hash as line %d", errKeyFile, n, first)
		}
		seen[e.hash] = n
		k.entries = append(k.entries, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d: longer than %d bytes", errKeyFile, n+1, maxKeyLineBytes)
		}
		return nil, fmt.Errorf("%w: %w", errKeyFile, err)
	}
	if lr.N == 0 {
		return nil, fmt.Errorf("%w: larger than %d bytes", errKeyFile, maxKeyFileBytes)
	}
	if len(k.entries) == 0 {
		return nil, fmt.Errorf("%w: no keys", errKeyFile)
	}
	return k, nil
}

// parseKeyLine parses one line; ok is false for blank and comment lines.
// Errors never quote the line.
func parseKeyLine(line string) (e keyEntry, ok bool, err error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return e, false, nil
	}
	f := strings.Fields(line)
	if n := len(f); n > 2 && strings.HasPrefix(f[n-1], groupsField) {
		if e.groups, err = parseGroups(f[n-1]); err != nil {
			return e, false, err
		}
		f = f[:n-1]
	}
	if len(f) < 2 || len(f) > 3 {
		return e, false, errors.New("want <sha256-hex> <plan> [<id>] [groups=<g>,...] (line not shown)")
	}
	if len(f[0]) != 2*sha256.Size {
		return e, false, errors.New("first field is not a 64-digit hex SHA-256; store HashKey(key), never the key (line not shown)")
	}
	if _, err := hex.Decode(e.hash[:], []byte(f[0])); err != nil {
		return e, false, errors.New("first field is not hex; store HashKey(key), never the key (line not shown)")
	}
	if !validPlan(f[1]) {
		return e, false, errors.New("plan must be 1-64 characters of [A-Za-z0-9._-]")
	}
	e.plan = f[1]
	e.id = "key-" + strings.ToLower(f[0][:12])
	if len(f) == 3 {
		if !validKeyID(f[2]) {
			return e, false, errors.New("id must be 1-128 characters of [A-Za-z0-9._@:+-]")
		}
		e.id = f[2]
	}
	return e, true, nil
}

// groupsField starts the optional last field of a key line.
const (
	groupsField  = "groups="
	maxKeyGroups = 32
)

// parseGroups reads "groups=a,b": sorted, duplicates removed.
func parseGroups(field string) ([]string, error) {
	groups := strings.Split(strings.TrimPrefix(field, groupsField), ",")
	if len(groups) > maxKeyGroups {
		return nil, fmt.Errorf("more than %d groups", maxKeyGroups)
	}
	for _, g := range groups {
		if !validKeyID(g) {
			return nil, errors.New("a group must be 1-128 characters of [A-Za-z0-9._@:+-], groups separated by commas")
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), nil
}

// count returns the number of keys.
func (k *APIKeys) count() int { return len(k.entries) }

// Authenticate implements Authenticator.
func (k *APIKeys) Authenticate(r *http.Request) (Principal, error) {
	const challenge = "Bearer"
	invalid := bearerChallenge{Error: "invalid_token"}.String()
	if tokenInQuery(r) {
		return Principal{}, refuse(errInvalidRequest, bearerChallenge{Error: "invalid_request"}.String(), errTokenInQuery)
	}
	key, err := presentedKey(r.Header)
	switch {
	case errors.Is(err, errManyAuthHeaders), errors.Is(err, errCompetingTokens):
		return Principal{}, refuse(errInvalidRequest, bearerChallenge{Error: "invalid_request"}.String(), err)
	case errors.Is(err, errEmptyBearer):
		return Principal{}, refuse(errInvalidToken, invalid, err)
	case err != nil || key == "":
		return Principal{}, refuse(errNoCredentials, challenge, err)
	case len(key) > maxAPIKeyBytes:
		return Principal{}, refuse(errInvalidToken, invalid, errCredentialTooBig)
	}
	e, ok := k.lookup(key)
	if !ok {
		return Principal{}, refuse(errInvalidToken, invalid, errUnknownKey)
	}
	return Principal{ID: e.id, Plan: e.plan, Scheme: SchemeAPIKey, Groups: slices.Clone(e.groups)}, nil
}

// presentedKey returns the key from Authorization: Bearer or X-API-Key.
func presentedKey(h http.Header) (string, error) {
	fromAuth, err := bearer(h)
	if err != nil && !errors.Is(err, errOtherAuthScheme) {
		return "", err
	}
	vals := h.Values(headerAPIKey)
	if len(vals) > 1 {
		return "", errManyAuthHeaders
	}
	var fromHeader string
	if len(vals) == 1 {
		fromHeader = strings.TrimSpace(vals[0])
	}
	switch {
	case fromAuth != "" && fromHeader != "" && fromAuth != fromHeader:
		return "", errCompetingTokens
	case fromAuth != "":
		return fromAuth, nil
	case fromHeader != "":
		return fromHeader, nil
	}
	return "", err
}

// lookup hashes key and compares the hash with every entry in constant
// time, without stopping at a match.
func (k *APIKeys) lookup(key string) (keyEntry, bool) {
	sum := sha256.Sum256([]byte(key))
	match := -1
	for i := range k.entries {
		eq := subtle.ConstantTimeCompare(sum[:], k.entries[i].hash[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return keyEntry{}, false
	}
	return k.entries[match], true
}

func validPlan(s string) bool { return validToken(s, 64, "._-") }

func validKeyID(s string) bool { return validToken(s, 128, "._@:+-") }

// validToken reports whether s is 1..max bytes of ASCII letters, digits
// and the given punctuation.
func validToken(s string, max int, punct string) bool {
	if s == "" || len(s) > max {
		return false
	}
	for _, c := range []byte(s) {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && !strings.ContainsRune(punct, rune(c)) {
			return false
		}
	}
	return true
}
