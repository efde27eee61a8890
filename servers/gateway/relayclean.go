package gateway

// What a relayed question carries (relay.go): an upstream's elicitation or
// sampling request rebuilt within the relay's limits, its text cleaned
// (kernel/untrusted), made one line and marked with its origin, and refused
// when it holds a credential the gateway knows.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// mark starts relayed text with its origin; the text is cleaned and made
// one line, so nothing in it can look like the start of another dialog.
func mark(up, s string) string {
	return fmt.Sprintf("[asked by the upstream server %q through the gateway, not by bulwark] %s", up, oneLine(s))
}

func oneLine(s string) string { return strings.Join(strings.Fields(untrusted.CleanString(s)), " ") }

// fieldRE is compiled on first use (lazyRE).
var fieldRE = lazyRE(`^[A-Za-z0-9_.-]{1,64}$`)

// cleanElicit rebuilds a form elicitation within the relay's limits: flat
// primitive fields only (as the specification allows), their texts cleaned.
func cleanElicit(up string, p *mcp.ElicitParams) (*mcp.ElicitParams, error) {
	if p == nil {
		return nil, errors.New("no parameters")
	}
	if p.Mode != "" && p.Mode != "form" {
		return nil, errors.New("only form elicitation is relayed")
	}
	if len(p.Message) > maxAskMessage {
		return nil, fmt.Errorf("the message is over %d bytes", maxAskMessage)
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil || len(raw) > maxAskSchema {
		return nil, fmt.Errorf("the requested schema is unencodable or over %d bytes", maxAskSchema)
	}
	var s struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Type != "object" {
		return nil, errors.New("the requested schema is not a flat object")
	}
	if len(s.Properties) > maxAskFields {
		return nil, fmt.Errorf("the form has %d fields, more than %d", len(s.Properties), maxAskFields)
	}
	props := make(map[string]any, len(s.Properties))
	for name, prop := range s.Properties {
		if !fieldRE().MatchString(name) {
			return nil, fmt.Errorf("field name %.64q is not allowed", name)
		}
		out, err := cleanField(prop)
		if err != nil {
			return nil, fmt.Errorf("field %q: %v", name, err)
		}
		props[name] = out
	}
	schema := map[string]any{"type": "object", "properties": props}
	var req []string
	for _, r := range s.Required {
		if _, ok := props[r]; ok {
			req = append(req, r)
		}
	}
	if len(req) > 0 {
		schema["required"] = req
	}
	return &mcp.ElicitParams{Mode: "form", Message: mark(up, p.Message), RequestedSchema: schema}, nil
}

// cleanField keeps a field of a form the specification allows (string,
// number, integer, boolean; a single-select enum as enum, enumNames or
// oneOf of const and title; a multi-select array of such strings), with
// only its known keywords, texts cleaned.
func cleanField(prop map[string]any) (map[string]any, error) {
	switch prop["type"] {
	case "string", "number", "integer", "boolean", "array":
	default:
		return nil, errors.New("only string, number, integer, boolean and enum-array fields are relayed")
	}
	out := map[string]any{}
	for k, v := range prop {
		var err error
		switch k {
		case "type", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "format", "title", "description":
			out[k], err = cleanScalar(v)
		case "default":
			if xs, ok := v.([]any); ok && prop["type"] == "array" {
				out[k], err = cleanStrings(xs)
			} else {
				out[k], err = cleanScalar(v)
			}
		case "enum", "enumNames":
			xs, _ := v.([]any)
			out[k], err = cleanStrings(xs)
		case "oneOf", "anyOf":
			out[k], err = cleanOptions(v)
		case "items":
			m, ok := v.(map[string]any)
			if !ok || prop["type"] != "array" {
				return nil, errors.New("items only on an array")
			}
			items := map[string]any{}
			for ik, iv := range m {
				switch ik {
				case "type":
					if iv != "string" {
						return nil, errors.New("array items must be strings")
					}
					items[ik] = iv
				case "enum":
					xs, _ := iv.([]any)
					items[ik], err = cleanStrings(xs)
				case "anyOf", "oneOf":
					items[ik], err = cleanOptions(iv)
				}
				if err != nil {
					return nil, err
				}
			}
			if items["enum"] == nil && items["anyOf"] == nil && items["oneOf"] == nil {
				return nil, errors.New("an array field must list its options")
			}
			out[k] = items
		} // any other keyword is dropped
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
	}
	if out["type"] == "array" && out["items"] == nil {
		return nil, errors.New("an array field must list its options")
	}
	return out, nil
}

func cleanScalar(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return oneLine(x), nil
	case float64, bool:
		return x, nil
	}
	return nil, errors.New("not a scalar")
}

func cleanStrings(xs []any) ([]any, error) {
	if xs == nil {
		return nil, errors.New("not a list")
	}
	out := make([]any, 0, len(xs))
	for _, x := range xs {
		s, ok := x.(string)
		if !ok {
			return nil, errors.New("holds a non-string")
		}
		out = append(out, oneLine(s))
	}
	return out, nil
}

// cleanOptions keeps a list of {const, title} options.
func cleanOptions(v any) ([]any, error) {
	xs, ok := v.([]any)
	if !ok {
		return nil, errors.New("not a list")
	}
	out := make([]any, 0, len(xs))
	for _, x := range xs {
		m, ok := x.(map[string]any)
		c, okc := m["const"].(string)
		if !ok || !okc {
			return nil, errors.New("an option needs a string const")
		}
		o := map[string]any{"const": oneLine(c)}
		if t, ok := m["title"].(string); ok {
			o["title"] = oneLine(t)
		}
		out = append(out, o)
	}
	return out, nil
}

// cleanSample rebuilds a sampling request within the relay's limits: text
// messages only, maxTokens capped, no context from other servers.
func cleanSample(up string, p *mcp.CreateMessageParams) (*mcp.CreateMessageParams, error) {
	if p == nil || len(p.Messages) == 0 {
		return nil, errors.New("no messages")
	}
	if len(p.Messages) > maxSampleMessages {
		return nil, fmt.Errorf("%d messages, more than %d", len(p.Messages), maxSampleMessages)
	}
	if p.MaxTokens <= 0 {
		return nil, errors.New("maxTokens must be positive")
	}
	n := len(p.SystemPrompt)
	msgs := make([]*mcp.SamplingMessage, 0, len(p.Messages))
	for _, m := range p.Messages {
		t, ok := m.Content.(*mcp.TextContent)
		if !ok || (m.Role != "user" && m.Role != "assistant") {
			return nil, errors.New("only text messages from user or assistant are relayed")
		}
		n += len(t.Text)
		msgs = append(msgs, &mcp.SamplingMessage{Role: m.Role, Content: &mcp.TextContent{Text: untrusted.CleanString(t.Text)}})
	}
	if n > maxSampleText {
		return nil, fmt.Errorf("the request holds over %d bytes of text", maxSampleText)
	}
	return &mcp.CreateMessageParams{MaxTokens: min(p.MaxTokens, MaxSampleTokens), Messages: msgs, IncludeContext: "none",
		SystemPrompt: mark(up, p.SystemPrompt), Temperature: p.Temperature}, nil
}

// holdsSecret refuses a question that carries a credential the gateway
// knows (its children's secret variables, upstream credentials), in any
// form its scrubber finds. The kernel refuses questions holding the
// credentials it was given; this covers what only the gateway knows.
func (g *Gateway) holdsSecret(p any) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	// the decoded strings, as the egress gate reads them: a secret written
	// with escapes inside the text is found too
	if _, n, err := egress.ScrubJSON(raw, g.scrub.secrets()); err != nil || n > 0 {
		return errors.New("the question held a credential, so it was not relayed")
	}
	return nil
}
