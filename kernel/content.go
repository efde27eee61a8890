package kernel

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Content is a result made of MCP content blocks, for tools whose output is
// not one JSON value or one text: an image, audio, an embedded resource, or
// several of them. The untrusted-data rules still hold: text blocks are
// cleaned and enveloped like Text; the text of embedded resources is cleaned
// and cut (it keeps its form, without tags, because it is a document); images
// and audio pass as they are, within maxBlobBytes; and, when any block is
// not a text block (which carries the envelope's note itself), a final text
// block says that all of it comes from the upstream and is untrusted (an
// image can carry written instructions too).
type Content []mcp.Content

// maxBlobBytes bounds the base64 data of all images, audio and blob
// resources of one result.
const maxBlobBytes = 4 << 20

// shapeContent applies the envelope to each block of a Content result.
func (s *Server) shapeContent(c Content) (*mcp.CallToolResult, error) {
	out := make([]mcp.Content, 0, len(c)+1)
	blobs, unwrapped := 0, len(c) == 0
	for _, block := range c {
		switch b := block.(type) {
		case *mcp.TextContent:
			text, rep := s.envelope.Text(b.Text)
			out = append(out, &mcp.TextContent{Text: s.envelope.Wrap(text, rep)})
			continue
		case *mcp.ImageContent:
			blobs += len(b.Data)
			out = append(out, b)
		case *mcp.AudioContent:
			blobs += len(b.Data)
			out = append(out, b)
		case *mcp.EmbeddedResource:
			r := *b.Resource
			if r.Text != "" {
				r.Text, _ = s.envelope.Text(r.Text)
			}
			blobs += len(r.Blob)
			out = append(out, &mcp.EmbeddedResource{Resource: &r})
		default:
			return nil, fmt.Errorf("content block %T is not supported", block)
		}
		unwrapped = true
	}
	if blobs > maxBlobBytes {
		return nil, &Error{Code: ResourceExhausted, Message: fmt.Sprintf("The result's images and files hold %d bytes, more than %d.", blobs, maxBlobBytes)}
	}
	if unwrapped { // text blocks carry the note in their envelope
		out = append(out, &mcp.TextContent{Text: contentNote(s.envelope)})
	}
	return &mcp.CallToolResult{Meta: mcp.Meta{"bulwark/untrusted": untrustedMeta(s.envelope.Source)}, Content: out}, nil
}

// contentNote is the final text block of a Content result that holds more
// than enveloped text.
func contentNote(e *untrusted.Envelope) string {
	return "The content above comes from " + e.Source + " and is untrusted. " + e.NoteText()
}

// textResult is the result of one text block with _meta meta, built in
// one allocation (three before: the result, its content slice, the block).
// Whoever adds a block appends to a slice of capacity one, so into a new
// array (scrub's note); the block's text is the result's own.
func textResult(meta mcp.Meta, text string) *mcp.CallToolResult {
	one := new(struct {
		res    mcp.CallToolResult
		text   mcp.TextContent
		blocks [1]mcp.Content
	})
	one.text.Text = text
	one.blocks[0] = &one.text
	one.res.Meta, one.res.Content = meta, one.blocks[:]
	return &one.res
}
