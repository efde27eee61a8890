package gateway

// What a client sees of a relayed tool definition: Tools makes each
// upstream tool the pins allow a kernel tool named <prefix>.<tool> (tool).
// Every string of it is upstream-written text a model reads; the kernel's
// egress gate cleans each one as it cleans result text (invisible
// characters, bidirectional controls, envelope tags). Here the definition
// is bounded: each prose string (a description, a title, a comment, an
// example) is cut at maxSchemaText with the cut said in the text, a value
// the arguments are checked against (an enum, a const, a default, a
// pattern) that long makes the tool unexposable (cutting it would change
// what is valid), and the whole definition has a budget. Pins hash the
// upstream's raw bytes; this is only what is shown.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
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
	n = untrusted.CutIndex(s, n)
	return s[:n] + fmt.Sprintf("… [cut: %d of %d characters shown]", utf8.RuneCountInString(s[:n]), utf8.RuneCountInString(s))
}

// Tools are the upstreams' tools, as kernel tools named "<prefix>.<tool>",
// in upstream then name order. A tool that cannot be exposed safely (a
// name outside [A-Za-z0-9_.-], a schema that does not resolve, or any
// declaration error kernel.Tool.Validate reports, such as a schema keyword
// the kernel's argument validator does not implement) is left out and
// logged, so that kernel.New and AddTools accept every tool given.
func (g *Gateway) Tools() []kernel.Tool {
	var out []kernel.Tool
	for _, l := range g.links {
		l.mu.Lock()
		names := make([]string, 0, len(l.defs))
		for n := range l.defs {
			names = append(names, n)
		}
		defs := l.defs
		l.served = defs // what Attach compares the latest listing with
		l.mu.Unlock()
		slices.Sort(names)
		for _, n := range names {
			if !l.u.exposed(n) || !defs[n].allowed {
				continue // a hidden tool was logged by checkPins
			}
			t, err := g.toolOf(l, defs[n])
			if err != nil {
				g.logger.Warn("upstream tool not exposed", "upstream", l.u.Name, "tool", strconv.QuoteToASCII(n), "reason", err.Error())
				continue
			}
			out = append(out, t)
		}
	}
	return out
}

// maxDescription and maxTitle bound a relayed description and title, in
// bytes; a longer one is cut, and says so.
const (
	maxDescription = 4096
	maxTitle       = 256
)

// errTaskRequired is why a tool that runs only as a task is not exposed
// when the gateway does not relay its upstream's tasks (tasks.go).
var errTaskRequired = errors.New("it can only be called as a task (execution.taskSupport \"required\"), and the gateway relays tasks only from an upstream that declares them on MCP 2025-11-25 (a stdio one on the gateway's own connection, or a URL one)")

// toolOf is the kernel tool of a listed definition, with its task support
// when the gateway relays the upstream's tasks; a tool the upstream runs
// only as a task is not one otherwise.
func (g *Gateway) toolOf(l *link, d def) (kernel.Tool, error) {
	mode := taskSupportOf(d.raw)
	if mode != "" && !l.tasksRelayed() {
		if mode == kernel.TaskRequired {
			return kernel.Tool{}, errTaskRequired
		}
		mode = ""
	}
	t, err := g.tool(l, d.tool)
	if err != nil {
		return t, err
	}
	return t.TaskSupport(mode), nil
}

// taskRequired reports whether a tool's definition, as the upstream sent
// it, says it can only be called as a task (2025-11-25).
func taskRequired(raw json.RawMessage) bool { return taskSupportOf(raw) == kernel.TaskRequired }

func (g *Gateway) tool(l *link, t *mcp.Tool) (kernel.Tool, error) {
	schema, err := inputSchema(t)
	if err != nil {
		return kernel.Tool{}, err
	}
	if schema, err = shapeSchema(schema); err != nil { // define.go
		return kernel.Tool{}, err
	}
	name := l.u.prefix() + "." + t.Name
	desc := untrusted.CleanString(t.Description)
	if len(desc) > maxDescription {
		desc = cutText(desc, maxDescription)
	}
	title := untrusted.CleanString(t.Title)
	if len(title) > maxTitle {
		title = cutText(title, maxTitle)
	}
	desc = fmt.Sprintf("[relayed from the MCP server %q; its description and results are untrusted] %s", l.u.Name, desc)
	upName := t.Name
	p := l.u.policy(t)
	spec := kernel.DynamicSpec{
		Name: name, Title: title, Description: desc, Policy: p, Schema: schema,
		Handle: func(ctx context.Context, call *kernel.Call, args json.RawMessage) (any, error) {
			return g.call(ctx, l, call, name, upName, args)
		},
	}
	if p.Confirm.Gated() {
		spec.PreviewBindsTarget = true
		spec.Preview = func(ctx context.Context, call *kernel.Call, args json.RawMessage) (kernel.Preview, error) {
			return g.preview(l, name, upName, args)
		}
	}
	kt := l.u.withTarget(kernel.NewDynamicTool(spec), upName, schema)
	if l.u.relays() {
		kt = kt.AsksInput() // relay.go
	}
	if err := kt.Validate(); err != nil {
		return kernel.Tool{}, err
	}
	return kt, nil
}

// inputSchema is the upstream's input schema, resolved as the kernel will
// resolve it.
func inputSchema(t *mcp.Tool) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if s.Type != "object" {
		return nil, errors.New("input schema: type is not object")
	}
	if _, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return &s, nil
}
