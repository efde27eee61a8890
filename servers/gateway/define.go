package gateway

// What a client sees of a relayed tool definition. Every string of it is
// upstream-written text a model reads; the kernel's egress gate cleans each
// one as it cleans result text (invisible characters, bidirectional
// controls, envelope tags). Here the definition is bounded: each prose
// string (a description, a title, a comment, an example) is cut at
// maxSchemaText with the cut said in the text, a value the arguments are
// checked against (an enum, a const, a default, a pattern) that long makes
// the tool unexposable (cutting it would change what is valid), and the
// whole definition has a budget. Pins hash the upstream's raw bytes; this
// is only what is shown.

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Bounds of a relayed definition as shown.
const (
	// maxSchemaText is the longest prose string of an input schema kept
	// whole, in bytes.
	maxSchemaText = 1024
	// maxSchemaBytes bounds an input schema, encoded, after the cuts.
	maxSchemaBytes = 64 << 10
)

// proseKeys hold text for a reader, which can be cut; examples are prose
// too (a model reads them, validation does not).
var proseKeys = map[string]bool{"description": true, "title": true, "$comment": true, "examples": true}

// shapeSchema returns the input schema a client is shown: prose cut at
// maxSchemaText (saying so), and an error when a validated value is longer
// than that or the whole is over maxSchemaBytes.
func shapeSchema(s *jsonschema.Schema) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	cut, err := shapeValue(v, "", false)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(cut)
	if err != nil {
		return nil, err
	}
	if len(out) > maxSchemaBytes {
		return nil, fmt.Errorf("input schema: %d bytes, over the %d a relayed definition may take", len(out), maxSchemaBytes)
	}
	var shaped jsonschema.Schema
	if err := json.Unmarshal(out, &shaped); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return &shaped, nil
}

// shapeValue walks one value of the schema; key is the member it is the
// value of ("" in an array it inherits from), prose whether it is text
// for a reader.
func shapeValue(v any, key string, prose bool) (any, error) {
	switch x := v.(type) {
	case string:
		if len(x) <= maxSchemaText {
			return x, nil
		}
		if !prose {
			return nil, fmt.Errorf("input schema: a %q value of %d bytes, over the %d a relayed definition may hold", key, len(x), maxSchemaText)
		}
		return cutText(x, maxSchemaText), nil
	case []any:
		for i, e := range x {
			c, err := shapeValue(e, key, prose)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
	case map[string]any:
		for k, e := range x {
			if len(k) > maxSchemaText {
				return nil, fmt.Errorf("input schema: a key of %d bytes", len(k))
			}
			c, err := shapeValue(e, k, proseKeys[k])
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
	}
	return v, nil
}

// cutText cuts s at a rune boundary at most n bytes in, saying how long it
// was.
func cutText(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… [cut: %d of %d characters shown]", utf8.RuneCountInString(s[:n]), utf8.RuneCountInString(s))
}
