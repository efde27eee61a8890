package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// Features are the MCP features an embedder serves itself on MCP(), beside
// the kernel's tools (the conformance fixture's prompts, resources and
// completion). The kernel declares exactly these, none with listChanged
// but prompts and resources under Options.DynamicTools (a gateway's
// change), and resources.subscribe only with Subscribe; a request for a
// feature not declared is "method not found" (-32601, HTTP 404 on
// 2026-07-28), so the capabilities a client sees are the truth.
type Features struct {
	Prompts     bool
	Resources   bool
	Completions bool

	// Subscribe and Unsubscribe, both set with Resources, serve
	// resources/subscribe and resources/unsubscribe (the go-sdk keeps
	// who subscribed to what; the embedder calls MCP().ResourceUpdated).
	Subscribe   func(context.Context, *mcp.SubscribeRequest) error
	Unsubscribe func(context.Context, *mcp.UnsubscribeRequest) error
	// Complete serves completion/complete, with Completions.
	Complete func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	// ReadTarget, with Resources and Options.Authz, is the resource type
	// of a resources/read in the authorization model: the action
	// Action::"resources/read" (read-only) acts on it or on the server,
	// and the embedder asks AuthorizeRead before it reads.
	ReadTarget authz.ResourceType
}

// ReadAction is the authorization action of a resources/read (Features.ReadTarget).
const ReadAction = "resources/read"

// ClientCapability names a capability a client declares (SEP-2575), which
// a tool may need to do its work.
type ClientCapability string

// The client capabilities a tool may require.
const (
	ClientSampling    ClientCapability = "sampling"
	ClientElicitation ClientCapability = "elicitation"
)

// codeMissingClientCapability is the JSON-RPC error a call gets when its
// tool requires a client capability the request did not declare
// (MissingRequiredClientCapability; HTTP 400 on 2026-07-28).
const codeMissingClientCapability = -32021

// RequireClient declares the client capabilities the tool needs. A call
// from a client that did not declare each of them (in the request's _meta
// on 2026-07-28, at initialize before) is refused with -32021 before its
// arguments are read or its handler runs (over HTTP the flood guard, the
// transport guards and admission have run by then). A tool without requirements is never
// refused this way.
func (t Tool) RequireClient(caps ...ClientCapability) Tool {
	for _, c := range caps {
		switch c {
		case ClientSampling, ClientElicitation:
		default:
			if t.err == nil {
				t.err = fmt.Errorf("tool %s: unknown client capability %q", t.name, c)
			}
			return t
		}
	}
	t.requires = append(t.requires[:len(t.requires):len(t.requires)], caps...)
	return t
}

// serverCapabilities are the capabilities the server declares: tools
// (a fixed set, so no listChanged), logging (logging/setLevel is served;
// nothing is logged to a client that set no level), and the embedder's
// features.
func serverCapabilities(f Features) *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}}
	if f.Prompts {
		c.Prompts = &mcp.PromptCapabilities{}
	}
	if f.Resources {
		c.Resources = &mcp.ResourceCapabilities{Subscribe: f.Subscribe != nil}
	}
	if f.Completions {
		c.Completions = &mcp.CompletionCapabilities{}
	}
	return c
}

// declared reports whether a method belongs to a feature the server
// declares (methods outside prompts, resources and completion are the
// SDK's to answer).
func (f Features) declared(method string) bool {
	switch {
	case strings.HasPrefix(method, "prompts/"):
		return f.Prompts
	case strings.HasPrefix(method, "resources/"):
		return f.Resources
	case method == "completion/complete":
		return f.Completions
	}
	return true
}

// capabilityMiddleware refuses what the capabilities exclude: a method of
// an undeclared feature (-32601), and a call of a tool whose required
// client capabilities the request did not declare (-32021).
func (s *Server) capabilityMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !s.opts.Features.declared(method) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", method)}
		}
		if ctr, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
			if t, known := s.lookup(ctr.Params.Name); known {
				if missing := missingClient(t.requires, ctr.ClientCapabilities()); missing != nil {
					return nil, missing
				}
			}
		}
		return next(ctx, method, req)
	}
}

// missingClient is the -32021 error for the required capabilities that
// have does not declare, or nil when it declares them all.
func missingClient(required []ClientCapability, have *mcp.ClientCapabilities) *jsonrpc.Error {
	if len(required) == 0 {
		return nil
	}
	if have == nil {
		have = &mcp.ClientCapabilities{}
	}
	want := map[string]struct{}{}
	var names []string
	for _, c := range required {
		if (c == ClientSampling && have.Sampling != nil) || (c == ClientElicitation && have.Elicitation != nil) {
			continue
		}
		want[string(c)] = struct{}{}
		names = append(names, string(c))
	}
	if len(names) == 0 {
		return nil
	}
	// The data is a ClientCapabilities object keyed by what is missing:
	// {"requiredCapabilities":{"sampling":{}}}.
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": want})
	return &jsonrpc.Error{Code: codeMissingClientCapability,
		Message: "This tool needs client capabilities the request did not declare: " + strings.Join(names, ", "),
		Data:    data}
}
