package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/internal/argcheck"
)

// invalidArguments is the tool error for arguments that do not fit the
// tool's schema (SEP-1303: a tool error the model can read and correct,
// not a protocol error).
func invalidArguments(f *argcheck.Failure) *Error {
	return Errorf(InvalidArgument, "Invalid arguments: %s", describeFailure(f)).
		WithHint("Check the tool's input schema and call it again with corrected arguments.")
}

// maxDescribed bounds the sentence describeFailure writes, in bytes.
const maxDescribed = 300

// describeFailure turns a validation failure into a sentence that names the
// argument: `argument "ttl": minimum: 5 is less than 60`, or for an item of
// an array `argument "records[].value": ...` (the index is left out, as the
// schema is the same for every item). A failure of the arguments object
// itself names no argument: `required: missing properties: ["zone"]`.
func describeFailure(f *argcheck.Failure) string {
	msg := f.Message()
	if len(msg) > maxDescribed {
		cut := maxDescribed
		for cut > 0 && msg[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		msg = msg[:cut] + "…"
	}
	var path []string
	for _, st := range f.Path {
		if st.Index >= 0 {
			if len(path) > 0 {
				path[len(path)-1] += "[]"
			}
			continue
		}
		path = append(path, st.Name)
	}
	if len(path) == 0 {
		return msg
	}
	return fmt.Sprintf("argument %q: %s", strings.Join(path, "."), msg)
}

// describeDecodeError names the field of a JSON type mismatch.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("argument %q must be %s", te.Field, te.Type)
	}
	return "they are not valid JSON"
}
