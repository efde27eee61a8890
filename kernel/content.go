package kernel

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

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

// shapeContent applies the envelope to each block of a Content result, and
// checks the metadata of the others (contentMeta): what is not what its
// field says is dropped, and a note says so.
func (s *Server) shapeContent(c Content) (*mcp.CallToolResult, error) {
	out := make([]mcp.Content, 0, len(c)+1)
	blobs, unwrapped := 0, len(c) == 0
	var notes metaNotes
	for _, block := range c {
		b, n, err := s.shapeBlock(block, &notes)
		if err != nil {
			return nil, err
		}
		if b != nil {
			out = append(out, b)
		}
		if _, text := block.(*mcp.TextContent); !text {
			unwrapped = true
		}
		blobs += n
	}
	if blobs > maxBlobBytes {
		return nil, &Error{Code: ResourceExhausted, Message: fmt.Sprintf("The result's images and files hold %d bytes, more than %d.", blobs, maxBlobBytes)}
	}
	if unwrapped || len(notes) > 0 { // text blocks carry the note in their envelope
		out = append(out, &mcp.TextContent{Text: contentNote(s.envelope, notes)})
	}
	return &mcp.CallToolResult{Meta: mcp.Meta{"bulwark/untrusted": untrustedMeta(s.envelope.Source)}, Content: out}, nil
}

// shapeBlock applies the envelope to one content block: text cleaned and
// enveloped, an embedded resource's text cleaned and cut, the metadata of
// the others checked (notes says what was dropped). It returns the block
// (nil when left out) and the bytes of base64 data it carries.
func (s *Server) shapeBlock(block mcp.Content, notes *metaNotes) (mcp.Content, int, error) {
	switch b := block.(type) {
	case *mcp.TextContent:
		text, rep := s.envelope.Text(b.Text)
		return &mcp.TextContent{Text: s.envelope.Wrap(text, rep)}, 0, nil
	case *mcp.ImageContent:
		mt, ok := notes.mediaType(b.MIMEType, true)
		if !ok {
			return nil, 0, nil
		}
		return &mcp.ImageContent{Data: b.Data, MIMEType: mt, Meta: notes.meta(b.Meta), Annotations: notes.annotations(b.Annotations)}, len(b.Data), nil
	case *mcp.AudioContent:
		mt, ok := notes.mediaType(b.MIMEType, true)
		if !ok {
			return nil, 0, nil
		}
		return &mcp.AudioContent{Data: b.Data, MIMEType: mt, Meta: notes.meta(b.Meta), Annotations: notes.annotations(b.Annotations)}, len(b.Data), nil
	case *mcp.EmbeddedResource:
		r := *b.Resource
		if r.Text != "" {
			r.Text, _ = s.envelope.Text(r.Text)
		}
		r.URI = notes.uri(r.URI)
		r.MIMEType, _ = notes.mediaType(r.MIMEType, false)
		r.Meta = notes.meta(r.Meta)
		return &mcp.EmbeddedResource{Resource: &r, Meta: notes.meta(b.Meta), Annotations: notes.annotations(b.Annotations)}, len(r.Blob), nil
	case *mcp.ResourceLink:
		// The embedder rewrote the URI to its own form (a gateway's
		// namespace); names and descriptions are cleaned and cut, icons
		// not relayed.
		if b.URI == "" {
			return nil, 0, nil
		}
		mt, _ := notes.mediaType(b.MIMEType, false)
		return &mcp.ResourceLink{URI: notes.uri(b.URI), Name: cutString(clean(b.Name), maxLinkText), Title: cutString(clean(b.Title), maxLinkText),
			Description: cutString(clean(b.Description), 4*maxLinkText), MIMEType: mt, Size: b.Size,
			Meta: notes.meta(b.Meta), Annotations: notes.annotations(b.Annotations)}, 0, nil
	}
	return nil, 0, fmt.Errorf("content block %T is not supported", block)
}

// maxLinkText bounds a resource link's name and title, in bytes (its
// description four times that).
const maxLinkText = 256

// cutString cuts s at n bytes, on a character boundary, and says so.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:untrusted.CutIndex(s, n)] + "… [cut]"
}

// ShapeResourceContents applies the untrusted-data rules to the contents
// of a resource an embedder relays (a gateway's upstream), served on
// MCP(): text cleaned, cut and enveloped, blobs within the byte budget of
// a result, media types and metadata checked, and each URI rewritten by
// uri (the embedder's namespace) and checked to be a URI.
func (s *Server) ShapeResourceContents(cs []*mcp.ResourceContents, uri func(string) string) ([]*mcp.ResourceContents, error) {
	var notes metaNotes
	out := make([]*mcp.ResourceContents, 0, len(cs))
	blobs := 0
	for _, c := range cs {
		if c == nil {
			continue
		}
		r := &mcp.ResourceContents{URI: notes.uri(uri(c.URI)), Blob: c.Blob, Meta: notes.meta(c.Meta)}
		r.MIMEType, _ = notes.mediaType(c.MIMEType, false)
		if c.Blob == nil {
			text, rep := s.envelope.Text(c.Text)
			r.Text = s.envelope.Wrap(text, rep)
		}
		blobs += len(c.Blob)
		out = append(out, r)
	}
	if blobs > maxBlobBytes {
		return nil, &Error{Code: ResourceExhausted, Message: fmt.Sprintf("The resource's blobs hold %d bytes, more than %d.", blobs, maxBlobBytes)}
	}
	return out, nil
}

// maxPromptMessages bounds the messages of a relayed prompt.
const maxPromptMessages = 64

// ShapePrompt applies the untrusted-data rules of a tool result to a
// prompt an embedder relays from elsewhere (a gateway's upstream), served
// on MCP(): every text block cleaned and enveloped, embedded resources
// cleaned and cut, images and audio within the same byte budget, metadata
// checked; roles other than user and assistant, blocks of another type
// (a resource link) and messages beyond maxPromptMessages are left out.
// The description is cleaned and ends with the note of what was left out;
// the egress gate then removes secrets, as from every message.
func (s *Server) ShapePrompt(res *mcp.GetPromptResult) (*mcp.GetPromptResult, error) {
	out := &mcp.GetPromptResult{}
	var notes metaNotes
	blobs := 0
	for i, m := range res.Messages {
		if i == maxPromptMessages {
			notes.add(fmt.Sprintf("messages after the first %d were left out", maxPromptMessages))
			break
		}
		if m == nil || m.Content == nil || (m.Role != "user" && m.Role != "assistant") {
			notes.add("a message without content or whose role is neither user nor assistant was left out")
			continue
		}
		b, n, err := s.shapeBlock(m.Content, &notes)
		if err != nil {
			notes.add(fmt.Sprintf("a message holding a block the gateway does not relay (%T) was left out", m.Content))
			continue
		}
		if b != nil {
			out.Messages = append(out.Messages, &mcp.PromptMessage{Role: m.Role, Content: b})
		}
		blobs += n
	}
	if blobs > maxBlobBytes {
		return nil, &Error{Code: ResourceExhausted, Message: fmt.Sprintf("The prompt's images and files hold %d bytes, more than %d.", blobs, maxBlobBytes)}
	}
	desc, _ := s.envelope.Text(res.Description)
	out.Description = strings.TrimSpace(desc + " [" + contentNote(s.envelope, notes) + "]")
	return out, nil
}

// Bounds of a content block's metadata.
const (
	maxBlockMeta = 8 << 10 // bytes of one _meta, encoded
)

// invalidURI stands for an upstream's resource URI that is not a URI.
const invalidURI = "urn:bulwark:invalid-uri"

// metaNotes collects what contentMeta dropped, for the result's final note.
type metaNotes []string

func (n *metaNotes) add(s string) {
	if !slices.Contains(*n, s) {
		*n = append(*n, s)
	}
}

// mediaType returns mt in normal form when it is a media type (RFC 6838).
// A block that needs one (an image, audio) and has none that is valid is
// left out (ok false); a resource's invalid mimeType is dropped.
func (n *metaNotes) mediaType(mt string, required bool) (string, bool) {
	if out, ok := untrusted.MediaType(mt); ok {
		return out, true
	}
	if !required {
		if mt != "" {
			n.add("a resource's mimeType that is not a media type (RFC 6838) was dropped")
		}
		return "", true
	}
	n.add("an image or audio block whose mimeType is not a media type (RFC 6838) was left out")
	return "", false
}

// uri returns u when it is a URI (RFC 3986), else invalidURI.
func (n *metaNotes) uri(u string) string {
	if untrusted.URI(u) {
		return u
	}
	n.add("a resource URI that is not a URI (RFC 3986) was replaced by " + invalidURI)
	return invalidURI
}

// meta returns m, or nil when it holds more than maxBlockMeta bytes.
func (n *metaNotes) meta(m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	if b, err := json.Marshal(m); err != nil || len(b) > maxBlockMeta {
		n.add(fmt.Sprintf("a block's _meta larger than %d bytes was dropped", maxBlockMeta))
		return nil
	}
	return m
}

// annotations keeps what the fields say they hold: the audiences "user"
// and "assistant", a priority from 0 to 1, an RFC 3339 lastModified.
func (n *metaNotes) annotations(a *mcp.Annotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	out := &mcp.Annotations{}
	for _, r := range a.Audience {
		if r == "user" || r == "assistant" {
			out.Audience = append(out.Audience, r)
		} else {
			n.add("an annotation's audience that is neither user nor assistant was dropped")
		}
	}
	if a.Priority >= 0 && a.Priority <= 1 {
		out.Priority = a.Priority
	}
	if _, err := time.Parse(time.RFC3339, a.LastModified); err == nil {
		out.LastModified = a.LastModified
	} else if a.LastModified != "" {
		n.add("an annotation's lastModified that is not an RFC 3339 time was dropped")
	}
	return out
}

// contentNote is the final text block of a Content result that holds more
// than enveloped text.
func contentNote(e *untrusted.Envelope, notes metaNotes) string {
	s := "The content above comes from " + e.Source + " and is untrusted. " + e.NoteText()
	if len(notes) > 0 {
		s += " Metadata the upstream wrote that was not what its field says: " + strings.Join(notes, "; ") + "."
	}
	return s
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
