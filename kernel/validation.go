package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

var (
	schemaPointer = regexp.MustCompile(`^validating (root|/.*)$`)
	floatNoise    = regexp.MustCompile(`(\d)\.0{6}\b`)
)

// describeValidation turns a jsonschema-go error chain ("validating root:
// validating /properties/ttl: minimum: 5 is less than 60.000000") into a
// sentence that names the argument: `argument "ttl": minimum: 5 is less
// than 60`. Schema internals (anyOf branches, $defs) are left out.
func describeValidation(err error) string {
	parts := strings.Split(err.Error(), ": ")
	var path []string
	i := 0
	for ; i < len(parts); i++ {
		m := schemaPointer.FindStringSubmatch(parts[i])
		if m == nil {
			break
		}
		if m[1] != "root" {
			path = pointerPath(m[1])
		}
	}
	msg := strings.Join(parts[i:], ": ")
	if j := strings.IndexByte(msg, '\n'); j >= 0 {
		msg = msg[:j]
	}
	msg = floatNoise.ReplaceAllString(msg, "$1")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if len(path) == 0 {
		return msg
	}
	return fmt.Sprintf("argument %q: %s", strings.Join(path, "."), msg)
}

// pointerPath keeps the property names of a schema pointer:
// /properties/records/items/properties/value -> [records[] value].
func pointerPath(ptr string) []string {
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var out []string
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 < len(segs) {
				out = append(out, segs[i+1])
				i++
			}
		case "items":
			if len(out) > 0 {
				out[len(out)-1] += "[]"
			}
		}
	}
	return out
}

// describeDecodeError names the field of a JSON type mismatch.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("argument %q must be %s", te.Field, te.Type)
	}
	return "they are not valid JSON"
}
