package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Limits of a tool definition, checked before any parsing.
const (
	// defaultMaxDefinition is the largest tool definition, in bytes, that is
	// canonicalized, pinned or scanned.
	defaultMaxDefinition = 1 << 20
	// maxDepth is the deepest nesting of objects and arrays in a definition.
	maxDepth = 64
)

// errDefinition marks a tool definition that cannot be pinned: not a JSON
// object, not RFC 8785-canonicalizable (duplicate member names, invalid
// UTF-8 or a lone surrogate, a number beyond IEEE 754 double range), too
// large or too deep, or without a string "name".
var errDefinition = errors.New("invalid tool definition")

// canonical returns the RFC 8785 (JSON Canonicalization Scheme) form of
// the JSON value raw: members sorted by their UTF-16 code units, numbers
// in ECMAScript's shortest form, strings minimally escaped, no whitespace.
// Duplicate member names, invalid UTF-8 and lone surrogates are refused,
// as are values larger than max bytes (defaultMaxDefinition if max <= 0)
// or nested deeper than maxDepth.
func canonical(raw []byte, max int) ([]byte, error) {
	if max <= 0 {
		max = defaultMaxDefinition
	}
	if len(raw) > max {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", errDefinition, len(raw), max)
	}
	if err := checkNumbersAndDepth(raw); err != nil {
		return nil, fmt.Errorf("%w: %v", errDefinition, err)
	}
	// A lone surrogate escape has no UTF-8 form; the kernel refuses it in
	// arguments (untrusted.HasLoneSurrogate) and so does the pin.
	if untrusted.HasLoneSurrogate(raw) {
		return nil, fmt.Errorf("%w: a \\u escape is a lone surrogate", errDefinition)
	}
	v := jsontext.Value(bytes.Clone(raw))
	if err := v.Canonicalize(); err != nil {
		return nil, fmt.Errorf("%w: %v", errDefinition, err)
	}
	return v, nil
}

// checkNumbersAndDepth reads raw token by token: nesting deeper than
// maxDepth is refused, and so is a number beyond IEEE 754 double range,
// which RFC 8785 (section 3.2.2.3) calls an error (jsontext would clamp it
// to the largest double, so 1e400 and 1.7976931348623157e308 would pin
// alike).
func checkNumbersAndDepth(raw []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	for {
		if dec.StackDepth() > maxDepth {
			return fmt.Errorf("nested deeper than %d", maxDepth)
		}
		if dec.PeekKind() == '0' {
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			if _, err := strconv.ParseFloat(string(v), 64); err != nil {
				return fmt.Errorf("number %.40s is out of range", v)
			}
			continue
		}
		if _, err := dec.ReadToken(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// Definition is a tool definition in canonical form, with its hashes.
type definition struct {
	// Name is the tool's "name".
	Name string
	// Canonical is the RFC 8785 form of the whole tool object.
	Canonical []byte
	// Hash is the hex SHA-256 of Canonical: what is pinned.
	Hash string
	// BodyHash is the hex SHA-256 of the canonical object without its
	// "name": equal body hashes under different names are a rename.
	BodyHash string
}

// parse canonicalizes a tool object as it arrives on the wire and hashes
// it. Every member counts, those this version does not know included.
func parse(raw []byte, max int) (*definition, error) {
	c, err := canonical(raw, max)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if c[0] != '{' || json.Unmarshal(c, &obj) != nil {
		return nil, fmt.Errorf("%w: not a JSON object", errDefinition)
	}
	var name string
	if err := json.Unmarshal(obj["name"], &name); err != nil || name == "" {
		return nil, fmt.Errorf("%w: no \"name\" string", errDefinition)
	}
	delete(obj, "name")
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if body, err = canonical(body, len(body)); err != nil {
		return nil, err
	}
	return &definition{Name: name, Canonical: c, Hash: hashHex(c), BodyHash: hashHex(body)}, nil
}

func (d *definition) entry(at time.Time) *pinEntry {
	return &pinEntry{Hash: d.Hash, BodyHash: d.BodyHash, Definition: d.Canonical, At: at.UTC()}
}

func hashHex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// pretty returns canonical JSON indented by two spaces, for a diff a
// person reads: every invisible, bidirectional or non-printing character
// inside a string is written as its \u escape, so what is shown is what
// was pinned (no Trojan Source).
func pretty(canonical []byte) ([]byte, error) {
	v := jsontext.Value(bytes.Clone(canonical))
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		return nil, err
	}
	return escapeHidden(v), nil
}

// escapeHidden rewrites runes a terminal would hide or reorder as JSON
// \u escapes. Outside strings JSON holds only ASCII, so only strings change.
func escapeHidden(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r < utf8.RuneSelf || unicode.IsPrint(r) && !untrusted.IsInvisible(r) {
			out = append(out, b[i:i+n]...)
		} else {
			out = appendEscape(out, r)
		}
		i += n
	}
	return out
}

func appendEscape(dst []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		dst = appendU(dst, 0xd800+(r>>10))
		return appendU(dst, 0xdc00+(r&0x3ff))
	}
	return appendU(dst, r)
}

func appendU(dst []byte, r rune) []byte {
	s := strconv.FormatInt(int64(r), 16)
	dst = append(dst, `\u`...)
	for range 4 - len(s) {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
