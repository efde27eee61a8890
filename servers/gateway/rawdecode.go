package gateway

// The gateway's decoding of what a stdio upstream writes: each JSON-RPC
// message, and the result of a relayed tools/call, decoded as the go-sdk
// decodes them — by the same library (github.com/segmentio/encoding/json,
// behind the go-sdk's internal/json), with the same flag (keys matched
// case-sensitively), the same nesting cap and the same wire structs — but
// with segmentio's Parse on the bytes in hand, not a fresh json.Decoder and
// its 32 KiB buffer for every value (the message, then its result, then
// each nested value with its own UnmarshalJSON). That buffer was most of the
// bytes a relayed call allocated (docs/performance.md).
//
// Exactness is by construction and checked: FuzzDecodeMessage and
// FuzzDecodeCallResult compare every input with jsonrpc.DecodeMessage and
// mcp.CallToolResult.UnmarshalJSON (the same value, or both refuse).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkMaxDepth is the go-sdk's nesting cap (internal/json.defaultMaxDepth).
const sdkMaxDepth = 1000

var errMaxDepth = fmt.Errorf("json: exceeded maximum nesting depth of %d", sdkMaxDepth)

// sdkUnmarshal is the go-sdk's internal/json.Unmarshal: the nesting check,
// then the first JSON value of data decoded into v with keys matched
// case-sensitively (what follows the first value is ignored, as its
// json.Decoder ignores it).
func sdkUnmarshal(data []byte, v any) error {
	if err := checkDepth(data); err != nil {
		return err
	}
	return sdkUnmarshalChecked(data, v)
}

// sdkUnmarshalChecked is sdkUnmarshal of data whose nesting is known to be
// within the cap: a value inside a message that passed checkDepth nests
// less deeply than the message.
func sdkUnmarshalChecked(data []byte, v any) error {
	if len(bytes.TrimLeft(data, " \t\r\n")) == 0 {
		return errors.New("unexpected end of JSON input")
	}
	_, err := segjson.Parse(data, v, segjson.DontMatchCaseInsensitiveStructFields)
	return err
}

// checkDepth is the go-sdk's checkMaxDepth: a byte count of unquoted
// brackets, which refuses what nests deeper than sdkMaxDepth before any
// decoder recurses into it. A string is skipped to its closing quote with
// bytes.IndexByte (an unescaped quote: one after an even run of
// backslashes) instead of byte by byte; FuzzCheckDepth holds it to
// checkDepthBytes, the go-sdk's loop.
func checkDepth(data []byte) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end := closingQuote(data, i)
			if end < 0 {
				return nil // an unterminated string: nothing after it counts
			}
			i = end
		case '{', '[':
			if depth++; depth > sdkMaxDepth {
				return errMaxDepth
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// closingQuote is the index of the quote that ends the string opened at
// data[open], or -1.
func closingQuote(data []byte, open int) int {
	for j := open + 1; ; j++ {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for m := j - 1; m > open && data[m] == '\\'; m-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
	}
}

// wireMessage is the go-sdk's jsonrpc2 wireDecode.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// errInvalidResponse: a response without a valid id (the go-sdk's
// jsonrpc2.ErrInvalidRequest).
var errInvalidResponse = errors.New("JSON RPC invalid request")

// decodeMessage is jsonrpc.DecodeMessage. Params and Result are copies:
// data may be reused once it returns.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if resp, ok := plainResponse(data); ok { // rawtext.go
		return resp, nil
	}
	return slowMessage(data)
}

// slowMessage is decodeMessage through segmentio.
func slowMessage(data []byte) (jsonrpc.Message, error) {
	var msg wireMessage
	if err := sdkUnmarshal(data, &msg); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if msg.VersionTag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", msg.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(msg.ID)
	if err != nil {
		return nil, err
	}
	if len(msg.Method) > 0 {
		var method string
		if err := sdkUnmarshal(msg.Method, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: msg.Params}, nil
	}
	if !id.IsValid() {
		return nil, errInvalidResponse
	}
	resp := &jsonrpc.Response{ID: id, Result: msg.Result}
	if msg.Error != nil {
		resp.Error = msg.Error
	}
	return resp, nil
}

// wireResult is the go-sdk's CallToolResult wire form (CallToolResult's
// members, content as wire blocks, resultType), but for _meta, which the
// gateway never reads (no member of an upstream's result _meta reaches the
// client or the gateway's decisions): it is kept as bytes and decoded only
// as far as needed to refuse what the go-sdk refuses (metaDecodes).
type wireResult struct {
	Meta              json.RawMessage     `json:"_meta,omitempty"`
	Content           []*wireContent      `json:"content"`
	StructuredContent any                 `json:"structuredContent,omitempty"`
	IsError           bool                `json:"isError,omitempty"`
	InputRequests     mcp.InputRequestMap `json:"inputRequests,omitempty"`
	RequestState      string              `json:"requestState,omitempty"`
	ResultType        string              `json:"resultType"`
}

// wireContent is the go-sdk's wireContent: every content block's members.
type wireContent struct {
	Type              string                `json:"type"`
	Text              string                `json:"text,omitempty"`
	MIMEType          string                `json:"mimeType,omitempty"`
	Data              []byte                `json:"data,omitempty"`
	Resource          *mcp.ResourceContents `json:"resource,omitempty"`
	URI               string                `json:"uri,omitempty"`
	Name              string                `json:"name,omitempty"`
	Title             string                `json:"title,omitempty"`
	Description       string                `json:"description,omitempty"`
	Size              *int64                `json:"size,omitempty"`
	Meta              mcp.Meta              `json:"_meta,omitempty"`
	Annotations       *mcp.Annotations      `json:"annotations,omitempty"`
	Icons             []mcp.Icon            `json:"icons,omitempty"`
	ID                string                `json:"id,omitempty"`
	Input             map[string]any        `json:"input,omitempty"`
	ToolUseID         string                `json:"toolUseId,omitempty"`
	NestedContent     []*wireContent        `json:"content,omitempty"`
	StructuredContent any                   `json:"structuredContent,omitempty"`
	IsError           bool                  `json:"isError,omitempty"`
}

// decodeCallResult decodes a tools/call result as the go-sdk's client does
// (its call's Await, then CallToolResult.UnmarshalJSON), in one pass, but
// for the result's _meta, left out (nil): the gateway never reads it, and
// decoding it into maps was a third of a relayed call's decoding. A result
// whose _meta the go-sdk would refuse is refused the same.
func decodeCallResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	if err := checkDepth(raw); err != nil {
		return nil, err
	}
	return decodeCheckedCallResult(raw)
}

// decodeCheckedCallResult is decodeCallResult of a result whose nesting is
// known to be within the cap: the result of a response decodeMessage
// decoded (the message's check covered it).
func decodeCheckedCallResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	if res, ok := plainResult(raw); ok { // rawtext.go
		return res, nil
	}
	return slowCallResult(raw)
}

// slowCallResult is decodeCheckedCallResult through segmentio.
func slowCallResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	res := new(mcp.CallToolResult)
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		// null, or not an object: whatever the go-sdk makes of it, by its
		// own decoding (rare; never a well-formed result).
		return res, sdkUnmarshal(raw, res)
	}
	var w wireResult
	if err := sdkUnmarshalChecked(raw, &w); err != nil {
		return nil, err
	}
	if metaDecodes(w.Meta) {
		var m mcp.Meta // what the go-sdk would decode it into, for its error
		if err := sdkUnmarshalChecked(w.Meta, &m); err != nil {
			return nil, err
		}
	}
	content, err := contentsFromWire(w.Content, nil)
	if err != nil {
		return nil, err
	}
	res.Content, res.StructuredContent, res.IsError = content, w.StructuredContent, w.IsError
	res.InputRequests, res.RequestState = w.InputRequests, w.RequestState
	return res, nil
}

// metaDecodes reports whether the valid JSON raw, a result's _meta, must be
// decoded into the go-sdk's mcp.Meta to know whether the go-sdk accepts it:
// anything but null or an object (the go-sdk refuses it), or an object
// holding a number (which it may refuse as out of range). An object of
// strings, booleans, nulls, arrays and objects always decodes.
func metaDecodes(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || string(t) == "null" {
		return false
	}
	if t[0] != '{' {
		return true
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '"':
			if i = closingQuote(t, i); i < 0 {
				return false // unterminated: the decoding already refused it
			}
		case c == '-' || c >= '0' && c <= '9':
			return true
		}
	}
	return false
}

// nestedAllow are the block types a tool_result block may hold.
var nestedAllow = map[string]bool{"text": true, "image": true, "audio": true, "resource_link": true, "resource": true}

// contentsFromWire is the go-sdk's contentsFromWire.
func contentsFromWire(wires []*wireContent, allow map[string]bool) ([]mcp.Content, error) {
	blocks := make([]mcp.Content, 0, len(wires))
	for _, w := range wires {
		b, err := contentFromWire(w, allow)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// contentFromWire is the go-sdk's contentFromWire and its blocks' fromWire.
func contentFromWire(w *wireContent, allow map[string]bool) (mcp.Content, error) {
	if w == nil {
		return nil, errors.New("nil content")
	}
	if allow != nil && !allow[w.Type] {
		return nil, fmt.Errorf("invalid content type %q", w.Type)
	}
	switch w.Type {
	case "text":
		return &mcp.TextContent{Text: w.Text, Meta: w.Meta, Annotations: w.Annotations}, nil
	case "image":
		return &mcp.ImageContent{MIMEType: w.MIMEType, Data: w.Data, Meta: w.Meta, Annotations: w.Annotations}, nil
	case "audio":
		return &mcp.AudioContent{MIMEType: w.MIMEType, Data: w.Data, Meta: w.Meta, Annotations: w.Annotations}, nil
	case "resource_link":
		return &mcp.ResourceLink{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description, MIMEType: w.MIMEType,
			Size: w.Size, Meta: w.Meta, Annotations: w.Annotations, Icons: w.Icons}, nil
	case "resource":
		return &mcp.EmbeddedResource{Resource: w.Resource, Meta: w.Meta, Annotations: w.Annotations}, nil
	case "tool_use":
		return &mcp.ToolUseContent{ID: w.ID, Name: w.Name, Input: w.Input, Meta: w.Meta}, nil
	case "tool_result":
		v := &mcp.ToolResultContent{ToolUseID: w.ToolUseID, StructuredContent: w.StructuredContent, IsError: w.IsError, Meta: w.Meta}
		if w.NestedContent != nil {
			nested, err := contentsFromWire(w.NestedContent, nestedAllow)
			if err != nil {
				return nil, fmt.Errorf("tool_result nested content: %w", err)
			}
			v.Content = nested
		}
		return v, nil
	}
	return nil, fmt.Errorf("unrecognized content type %q", w.Type)
}
