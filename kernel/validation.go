package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/internal/argcheck"
)

// checkSchema is the part of a tool's declaration check (Tool.Validate)
// that concerns its input schema: everything registering it does that can
// fail. The argument validator every call goes through compiles it, it
// encodes, and the go-sdk registers it. The declared schema is checked;
// what a server advertises (wireSchema) adds at most the confirmToken
// property, a plain string that no $ref, anchor, default, encoding or
// x-mcp-header of a schema that passes can be broken by (FuzzDeclarationCheck).
func checkSchema(name string, s *jsonschema.Schema) error {
	if _, err := argcheck.Compile(s); err != nil {
		return fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	wire, err := schemaJSON(s)
	if err != nil {
		return fmt.Errorf("tool %s: encoding its input schema: %w", name, err)
	}
	if err := sdkRegisters(name, wire); err != nil {
		return fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	return nil
}

// sdkRegisters reports the go-sdk's own refusal of a tool whose input
// schema is wire. Its AddTool refuses by panicking (an x-mcp-header
// annotation on a property that is not a string, integer or boolean, or a
// header name given twice); the refusal is asked of a server of its own,
// so that the go-sdk's rule is applied, not a copy of it, and becomes an
// error here instead of a panic in New or AddTools.
func sdkRegisters(name string, wire json.RawMessage) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the go-sdk refuses it: %v", r)
		}
	}()
	srv := mcp.NewServer(&mcp.Implementation{Name: "declaration-check"}, nil)
	srv.AddTool(&mcp.Tool{Name: name, InputSchema: wire}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("never called")
	})
	return nil
}

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
