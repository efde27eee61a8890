package gateway

// What an upstream's tools/call result becomes: within the size cap, an
// error result as the upstream's error, and every channel of it handed to
// the kernel, which shapes it in the untrusted envelope.

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// result turns an upstream's result into what the kernel shapes: every
// channel of it goes through the envelope.
func (g *Gateway) result(l *link, name string, res *mcp.CallToolResult) (any, error) {
	if n := resultBytes(res); n > l.u.maxResult() {
		return nil, &kernel.Error{Code: kernel.ResourceExhausted,
			Message: fmt.Sprintf("The upstream %q answered %q with %d bytes, more than the %d allowed.", l.u.Name, name, n, l.u.maxResult())}
	}
	if res.IsError {
		return nil, &kernel.Error{Code: kernel.UpstreamError, Upstream: contentText(res.Content),
			Message: fmt.Sprintf("The upstream %q reported an error from %q.", l.u.Name, name)}
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("encoding structured content: %w", err)
		}
		return json.RawMessage(raw), nil
	}
	if len(res.Content) == 0 {
		return kernel.Text(""), nil
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok && tc != nil && len(res.Content) == 1 {
		// One text block: the kernel shapes a Text exactly as a Content of
		// that block (the block's own _meta and annotations are dropped
		// either way), without the Content's slice (TestOneTextShape).
		return kernel.Text(tc.Text), nil
	}
	out := make(kernel.Content, 0, len(res.Content))
	for _, c := range res.Content {
		switch b := c.(type) {
		case *mcp.TextContent, *mcp.ImageContent, *mcp.AudioContent:
			out = append(out, c)
		case *mcp.EmbeddedResource:
			if b.Resource == nil {
				continue
			}
			out = append(out, embedded(l.u, b))
		case *mcp.ResourceLink:
			// kept a link, to the namespaced URI a client reads through
			// the gateway (resources.go); the kernel cleans its texts
			link := *b
			link.URI, link.Icons = linkURI(l.u, b.URI), nil
			out = append(out, &link)
		default:
			out = append(out, &mcp.TextContent{Text: fmt.Sprintf("[a content block of type %T was left out]", c)})
		}
	}
	return out, nil
}

// embedded is an embedded resource with its URI namespaced, as the
// gateway serves the upstream's resources (resources.go).
func embedded(u *Upstream, b *mcp.EmbeddedResource) *mcp.EmbeddedResource {
	r := *b.Resource
	r.URI = linkURI(u, r.URI)
	return &mcp.EmbeddedResource{Resource: &r, Meta: b.Meta, Annotations: b.Annotations}
}

// contentText joins a result's text for an error.
func contentText(cs []mcp.Content) string {
	var s string
	for _, c := range cs {
		if t, ok := c.(*mcp.TextContent); ok {
			s += t.Text + "\n"
		}
	}
	return s
}

// resultBytes approximates a result's size as the upstream encoded it.
func resultBytes(res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		switch b := c.(type) {
		case *mcp.TextContent:
			n += len(b.Text)
		case *mcp.ImageContent:
			n += len(b.Data)
		case *mcp.AudioContent:
			n += len(b.Data)
		case *mcp.EmbeddedResource:
			if b.Resource != nil {
				n += len(b.Resource.Text) + len(b.Resource.Blob)
			}
		}
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		n += len(raw)
	}
	return n
}

// cleanJSON sanitizes a log notification's data like a result.
func (g *Gateway) cleanJSON(raw []byte) []byte {
	clean, _, err := g.env.JSON(raw)
	if err != nil {
		return []byte(`"[unencodable]"`)
	}
	return clean
}
