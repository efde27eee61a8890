package tsig

import (
	"fmt"
	"strings"
)

// Parse reads a key file in one of the forms the servers' own tools write:
//
//   - BIND's key statements, as `tsig-keygen -a hmac-sha256 NAME` prints
//     them: key "NAME" { algorithm hmac-sha256; secret "BASE64"; };
//     (comments #, // and /* */ allowed);
//   - Knot's key list, as `keymgr -t NAME hmac-sha256` prints it: a "key:"
//     line, then "- id: NAME", "algorithm: …" and "secret: …" per key;
//   - lines ALGORITHM:NAME:BASE64, as `dig -y` and `knsupdate -y` take them
//     (lines starting with # are comments).
//
// Every key must be HMAC-SHA256 or HMAC-SHA512 with a secret of at least
// MinSecretBytes; errors name the line, never a secret.
func Parse(text string) (*Keyring, error) {
	if len(text) > MaxFileBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrKeyFile, MaxFileBytes)
	}
	var keys []Key
	var err error
	switch {
	case strings.Contains(text, "{"):
		keys, err = parseBIND(text)
	case isKnot(text):
		keys, err = parseKnot(text)
	default:
		keys, err = parseLines(text)
	}
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key found (tsig-keygen -a hmac-sha256 NAME writes one)", ErrKeyFile)
	}
	if len(keys) > MaxKeys {
		return nil, fmt.Errorf("%w: more than %d keys", ErrKeyFile, MaxKeys)
	}
	return NewKeyring(keys...)
}

// parseLines reads ALGORITHM:NAME:SECRET lines.
func parseLines(text string) ([]Key, error) {
	var keys []Key
	n := 0
	for line := range strings.Lines(text) {
		n++
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		alg, rest, ok1 := strings.Cut(line, ":")
		name, secret, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: line %d is not ALGORITHM:NAME:SECRET", ErrKeyFile, n)
		}
		k, err := NewKey(name, alg, secret)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// isKnot reports a Knot key list: a line "key:" outside comments.
func isKnot(text string) bool {
	for line := range strings.Lines(text) {
		if strings.TrimSpace(line) == "key:" {
			return true
		}
	}
	return false
}

// parseKnot reads Knot's key list (the YAML keymgr prints; only the key
// section, one "- id:" item per key).
func parseKnot(text string) ([]Key, error) {
	type item struct{ id, alg, secret string }
	var items []*item
	n, inKeys := 0, false
	for line := range strings.Lines(text) {
		n++
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		if t == "key:" {
			inKeys = true
			continue
		}
		if !inKeys {
			return nil, fmt.Errorf("%w: line %d: only a key: section is read", ErrKeyFile, n)
		}
		if rest, ok := strings.CutPrefix(t, "- "); ok {
			items = append(items, &item{})
			t = strings.TrimSpace(rest)
		}
		field, value, ok := strings.Cut(t, ":")
		if !ok || len(items) == 0 {
			return nil, fmt.Errorf("%w: line %d is not a key item", ErrKeyFile, n)
		}
		value = strings.Trim(strings.TrimSpace(value), `"'`)
		cur := items[len(items)-1]
		switch strings.TrimSpace(field) {
		case "id":
			cur.id = value
		case "algorithm":
			cur.alg = value
		case "secret":
			cur.secret = value
		default:
			return nil, fmt.Errorf("%w: line %d: unknown key field", ErrKeyFile, n)
		}
	}
	keys := make([]Key, 0, len(items))
	for _, it := range items {
		k, err := NewKey(it.id, it.alg, it.secret)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// parseBIND reads key statements.
func parseBIND(text string) ([]Key, error) {
	toks, err := tokens(text)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for i := 0; i < len(toks); {
		k, next, err := keyStatement(toks, i)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
		i = next
	}
	return keys, nil
}

// token is one token of a BIND key file and the line it is on.
type token struct {
	text   string
	quoted bool
	line   int
}

// keyStatement reads `key NAME { algorithm A; secret "S"; };` from toks[i:].
func keyStatement(toks []token, i int) (Key, int, error) {
	at := func(j int) token {
		if j < len(toks) {
			return toks[j]
		}
		return token{line: toks[len(toks)-1].line}
	}
	bad := func(j int, want string) error {
		return fmt.Errorf("%w: line %d: want %s", ErrKeyFile, at(j).line, want)
	}
	if t := at(i); t.quoted || !strings.EqualFold(t.text, "key") {
		return Key{}, 0, bad(i, `a key statement (key "NAME" { … };)`)
	}
	name := at(i + 1)
	if name.text == "" || name.text == "{" {
		return Key{}, 0, bad(i+1, "the key's name")
	}
	if at(i+2).text != "{" {
		return Key{}, 0, bad(i+2, "{")
	}
	fields := map[string]string{}
	j := i + 3
	for at(j).text != "}" || at(j).quoted {
		f, v, end := at(j), at(j+1), at(j+2)
		if f.quoted || v.text == "" || end.text != ";" {
			return Key{}, 0, bad(j, "algorithm NAME; or secret \"BASE64\";")
		}
		field := strings.ToLower(f.text)
		if field != "algorithm" && field != "secret" {
			return Key{}, 0, bad(j, "algorithm or secret")
		}
		fields[field] = v.text
		j += 3
	}
	if at(j+1).text != ";" {
		return Key{}, 0, bad(j+1, "; after }")
	}
	k, err := NewKey(name.text, fields["algorithm"], fields["secret"])
	if err != nil {
		return Key{}, 0, fmt.Errorf("line %d: %w", name.line, err)
	}
	return k, j + 2, nil
}

// tokens splits a BIND configuration text into words, quoted strings and
// the punctuation { } ;, dropping comments.
func tokens(text string) ([]token, error) {
	var out []token
	line := 1
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' || strings.HasPrefix(text[i:], "//"):
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("%w: line %d: comment not closed", ErrKeyFile, line)
			}
			line += strings.Count(text[i:i+2+end], "\n")
			i += end + 4
		case c == '{' || c == '}' || c == ';':
			out = append(out, token{text: string(c), line: line})
			i++
		case c == '"':
			end := strings.IndexAny(text[i+1:], "\"\n")
			if end < 0 || text[i+1+end] != '"' {
				return nil, fmt.Errorf("%w: line %d: string not closed", ErrKeyFile, line)
			}
			out = append(out, token{text: text[i+1 : i+1+end], quoted: true, line: line})
			i += end + 2
		default:
			j := i
			for j < len(text) && !strings.ContainsRune(" \t\r\n{};\"#", rune(text[j])) && !strings.HasPrefix(text[j:], "//") {
				j++
			}
			out = append(out, token{text: text[i:j], line: line})
			i = j
		}
	}
	return out, nil
}
