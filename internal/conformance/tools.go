package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Fixture texts the scenarios and our own tests look for.
const (
	SimpleText     = "This is a simple text response for testing."
	ErrorText      = "This tool intentionally returns an error for testing."
	LoggingDone    = "Tool with logging executed successfully."
	ProgressDone   = "Tool with progress executed successfully."
	EmbeddedText   = "This is an embedded resource."
	LogToolText    = "Log attempted; the kernel sends log messages only at the level the client chose."
	StreamToolText = "Stream observed: result frames only, no requests to the client."
)

// stepDelay spaces the log and progress notifications, as the scenarios ask
// ("the delays are important"). It is short: the suite runs in seconds.
const stepDelay = 50 * time.Millisecond

// readOnly is the policy of every fixture tool: none of them changes
// anything or leaves this process.
var readOnly = kernel.Policy{
	ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No,
	Confirm: kernel.Never, Tier: kernel.Open,
}

type noArgs struct{}

// Tools returns the fixture's tool declarations, the multi-round-trip ones
// (mrtr.go) included. Names the kernel cannot serve (server-to-client
// requests on a 2025-11-25 stateless request, diagnostic hooks that change
// the tool list) are absent; test/e2e/README.md says why.
func Tools() []kernel.Tool {
	return append([]kernel.Tool{
		simple("test_simple_text", "Returns a fixed line of text.", func() any { return kernel.Text(SimpleText) }),
		simple("test_image_content", "Returns a 1x1 PNG image.", func() any {
			return kernel.Content{&mcp.ImageContent{MIMEType: "image/png", Data: PNG()}}
		}),
		simple("test_audio_content", "Returns a short silent WAV clip.", func() any {
			return kernel.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: WAV()}}
		}),
		simple("test_embedded_resource", "Returns an embedded text resource.", func() any {
			return kernel.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: EmbeddedText}}}
		}),
		simple("test_multiple_content_types", "Returns text, an image and an embedded resource together.", mixed),
		kernel.NewTool(kernel.Spec[noArgs, kernel.Text]{
			Name: "test_tool_with_logging", Description: "Sends three info log messages while it runs.", Policy: readOnly,
			Handle: withLogging,
		}),
		kernel.NewTool(kernel.Spec[noArgs, kernel.Text]{
			Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100 while it runs.", Policy: readOnly,
			Handle: withProgress,
		}),
		kernel.NewTool(kernel.Spec[noArgs, kernel.Text]{
			Name: "test_error_handling", Description: "Always fails with a tool error.", Policy: readOnly,
			Handle: func(context.Context, *kernel.Call, noArgs) (kernel.Text, error) {
				return "", kernel.Errorf(kernel.FailedPrecondition, "%s", ErrorText)
			},
		}),
		kernel.NewTool(kernel.Spec[noArgs, kernel.Text]{
			Name: "test_logging_tool", Description: "Tries to send one log message.", Policy: readOnly,
			Handle: func(ctx context.Context, c *kernel.Call, _ noArgs) (kernel.Text, error) {
				c.Log(ctx, slog.LevelInfo, "test_logging_tool executed", nil)
				return LogToolText, nil
			},
		}),
		// Needs sampling: a request that does not declare it is refused
		// with -32021 before the handler runs.
		simple("test_missing_capability", "Needs the client's sampling capability; refused without it.",
			func() any { return kernel.Text("sampling declared") }).RequireClient(kernel.ClientSampling),
		simple("test_streaming_elicitation", "Returns a plain result; it never sends a request to the client.", func() any { return kernel.Text(StreamToolText) }),
		dynamic("json_schema_2020_12_tool", "Takes arguments described with JSON Schema 2020-12 features.", schema202012),
		dynamic("test_x_mcp_header", "Takes a region argument mirrored into the Mcp-Param-Region header (SEP-2243).", schemaXMCPHeader),
	}, mrtrTools()...)
}

// simple declares an argument-less tool returning what f builds.
func simple(name, desc string, f func() any) kernel.Tool {
	return kernel.NewTool(kernel.Spec[noArgs, any]{
		Name: name, Description: desc, Policy: readOnly,
		Handle: func(context.Context, *kernel.Call, noArgs) (any, error) { return f(), nil },
	})
}

func mixed() any {
	return kernel.Content{
		&mcp.TextContent{Text: "Multiple content types test:"},
		&mcp.ImageContent{MIMEType: "image/png", Data: PNG()},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
	}
}

func withLogging(ctx context.Context, c *kernel.Call, _ noArgs) (kernel.Text, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 && !sleep(ctx, stepDelay) {
			return "", ctx.Err()
		}
		c.Log(ctx, slog.LevelInfo, msg, nil)
	}
	return LoggingDone, nil
}

func withProgress(ctx context.Context, c *kernel.Call, _ noArgs) (kernel.Text, error) {
	for i, done := range []float64{0, 50, 100} {
		if i > 0 && !sleep(ctx, stepDelay) {
			return "", ctx.Err()
		}
		c.Progress(ctx, done, 100, fmt.Sprintf("Completed step %.0f of 100", done))
	}
	return ProgressDone, nil
}

// sleep waits d unless ctx ends first; it reports whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dynamic declares a tool with a run-time schema that echoes its arguments.
func dynamic(name, desc, schema string) kernel.Tool {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		panic("conformance: schema of " + name + ": " + err.Error())
	}
	return kernel.NewDynamicTool(kernel.DynamicSpec{
		Name: name, Description: desc, Policy: readOnly, Schema: &s,
		Handle: func(_ context.Context, _ *kernel.Call, args json.RawMessage) (any, error) {
			return kernel.Text(name + " called with: " + string(args)), nil
		},
	})
}

// schema202012 uses the 2020-12 vocabulary the json-schema-2020-12 scenario
// expects to survive tools/list: $schema, $defs, $anchor, $ref, allOf/anyOf,
// if/then/else and additionalProperties.
const schema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

// schemaXMCPHeader arms the http-custom-header-server-validation scenario,
// which looks for a tool with an x-mcp-header annotation.
const schemaXMCPHeader = `{
  "type": "object",
  "properties": {
    "region": {"type": "string", "description": "Mirrored into Mcp-Param-Region.", "x-mcp-header": "Region"},
    "level": {"type": "integer", "description": "Not mirrored."}
  }
}`
