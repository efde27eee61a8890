package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource URIs the scenarios read.
const (
	StaticTextURI   = "test://static-text"
	StaticBinaryURI = "test://static-binary"
	TemplateURI     = "test://template/{id}/data"
	WatchedURI      = "test://watched-resource"
	StaticText      = "This is the content of the static text resource."
)

// addResources registers the resources and the template on the go-sdk
// server: the kernel manages tools only.
func addResources(s *mcp.Server) {
	text := func(uri, body string) mcp.ResourceHandler {
		return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	s.AddResource(&mcp.Resource{Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain", URI: StaticTextURI},
		text(StaticTextURI, StaticText))
	s.AddResource(&mcp.Resource{Name: "static-binary", Description: "A static binary resource (a PNG image).", MIMEType: "image/png", URI: StaticBinaryURI},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: PNG()}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "watched-resource", Description: "A resource clients may subscribe to.", MIMEType: "text/plain", URI: WatchedURI},
		text(WatchedURI, "Watched resource content."))
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "template", Description: "A resource template with an id parameter.",
		MIMEType: "application/json", URITemplate: TemplateURI}, readTemplate)
}

// templateData is the JSON body of a test://template/{id}/data resource.
type templateData struct {
	ID           string `json:"id"`
	TemplateTest bool   `json:"templateTest"`
	Data         string `json:"data"`
}

// readTemplate serves test://template/{id}/data. The SDK has matched the
// template already; the id is the path segment between the fixed parts.
func readTemplate(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, "test://template/")
	if ok {
		id, ok = strings.CutSuffix(id, "/data")
	}
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	body, err := json.Marshal(templateData{ID: id, TemplateTest: true, Data: "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
}

// addPrompts registers the prompts on the go-sdk server.
func addPrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A prompt without arguments."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompt("A simple test prompt", &mcp.TextContent{Text: "This is a simple prompt for testing."}), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with two required arguments.",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return prompt("A prompt with arguments",
				&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
		Description: "A prompt that embeds a resource.",
		Arguments:   []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}
			return prompt("A prompt with an embedded resource", res, &mcp.TextContent{Text: "Please process the embedded resource above."}), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes an image."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompt("A prompt with an image", &mcp.ImageContent{Data: PNG(), MIMEType: "image/png"},
				&mcp.TextContent{Text: "Please analyze the image above."}), nil
		})
}

func prompt(desc string, content ...mcp.Content) *mcp.GetPromptResult {
	r := &mcp.GetPromptResult{Description: desc}
	for _, c := range content {
		r.Messages = append(r.Messages, &mcp.PromptMessage{Role: "user", Content: c})
	}
	return r
}

// completion answers completion/complete with an empty list. kernel.New
// builds the go-sdk server without a CompletionHandler, so a receiving
// middleware answers before the SDK's own "method not found"; the
// completions capability is therefore not advertised (see the README).
func completion(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "completion/complete" {
			return next(ctx, method, req)
		}
		cr, ok := req.(*mcp.CompleteRequest)
		if !ok || cr.Params == nil || cr.Params.Ref == nil || cr.Params.Argument.Name == "" {
			return next(ctx, method, req) // the SDK validates and refuses
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
}
