package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// The multi-round-trip tools (SEP-2322) of the input-required-result-*
// scenarios, built on kernel.AskInput: the kernel seals each requestState
// and refuses a tampered one with -32602 before the handler runs.

// StateOK is what the request-state tool says once the kernel has verified
// the state it sent and handed it back.
const StateOK = "state-ok"

func mrtrTools() []kernel.Tool {
	return []kernel.Tool{
		asks("test_input_required_result_elicitation", "Asks the user's name by elicitation, then greets.", askName),
		asks("test_input_required_result_sampling", "Asks the client's model a question by sampling, then reports its answer.", askSampling),
		asks("test_input_required_result_list_roots", "Asks the client's roots, then lists them.", askRoots),
		asks("test_input_required_result_request_state", "Asks for confirmation with a requestState, and checks it on the retry.", askWithState),
		asks("test_input_required_result_tampered_state", "Asks with a requestState; a tampered one is refused.", askWithState),
		asks("test_input_required_result_multiple_inputs", "Asks by elicitation, sampling and roots at once.", askAll),
		asks("test_input_required_result_multi_round", "Asks twice, with a new requestState each round.", askTwice),
		asks("test_input_required_result_capabilities", "Asks only what the client declared.", askDeclared),
	}
}

// asks declares an argument-less tool that may ask for input.
func asks(name, desc string, h func(c *kernel.Call) (kernel.Text, error)) kernel.Tool {
	return kernel.NewTool(kernel.Spec[noArgs, kernel.Text]{
		Name: name, Description: desc, Policy: readOnly,
		Handle: func(_ context.Context, c *kernel.Call, _ noArgs) (kernel.Text, error) { return h(c) },
	}).AsksInput()
}

func elicit(message, field string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{field: map[string]any{"type": "string"}},
		"required":   []string{field},
	}}
}

func sampling(q string) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: 100, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: q}}}}
}

// accepted returns the content field of an accepted elicitation.
func accepted(c *kernel.Call, id, field string) (string, bool) {
	r, ok := c.Elicited(id)
	if !ok || r.Action != "accept" {
		return "", false
	}
	return fmt.Sprint(r.Content[field]), true
}

func askName(c *kernel.Call) (kernel.Text, error) {
	if name, ok := accepted(c, "user_name", "name"); ok {
		return kernel.Text("Hello, " + name + "!"), nil
	}
	return "", kernel.AskInput(mcp.InputRequestMap{"user_name": elicit("What is your name?", "name")}, nil)
}

func sampled(c *kernel.Call, id string) (string, bool) {
	r, ok := c.InputResponses()[id].(*mcp.CreateMessageWithToolsResult)
	if !ok || r == nil {
		return "", false
	}
	var b strings.Builder
	for _, ct := range r.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String(), true
}

func askSampling(c *kernel.Call) (kernel.Text, error) {
	if text, ok := sampled(c, "capital_question"); ok {
		return kernel.Text("The model said: " + text), nil
	}
	return "", kernel.AskInput(mcp.InputRequestMap{"capital_question": sampling("What is the capital of France?")}, nil)
}

func rootsOf(c *kernel.Call, id string) ([]string, bool) {
	r, ok := c.InputResponses()[id].(*mcp.ListRootsResult)
	if !ok || r == nil {
		return nil, false
	}
	var uris []string
	for _, root := range r.Roots {
		if root != nil {
			uris = append(uris, root.URI)
		}
	}
	return uris, true
}

func askRoots(c *kernel.Call) (kernel.Text, error) {
	if uris, ok := rootsOf(c, "client_roots"); ok {
		return kernel.Text("Roots: " + strings.Join(uris, ", ")), nil
	}
	return "", kernel.AskInput(mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}, nil)
}

func askWithState(c *kernel.Call) (kernel.Text, error) {
	if string(c.State()) == StateOK {
		if _, ok := c.Elicited("confirm"); ok {
			return StateOK + ": the requestState came back intact", nil
		}
	}
	return "", kernel.AskInput(mcp.InputRequestMap{"confirm": elicit("Proceed?", "ok")}, []byte(StateOK))
}

func askAll(c *kernel.Call) (kernel.Text, error) {
	name, okName := accepted(c, "user_name", "name")
	text, okText := sampled(c, "greeting")
	uris, okRoots := rootsOf(c, "client_roots")
	if string(c.State()) == "all" && okName && okText && okRoots {
		return kernel.Text(fmt.Sprintf("name %s; model said %q; %d root(s)", name, text, len(uris))), nil
	}
	return "", kernel.AskInput(mcp.InputRequestMap{
		"user_name":    elicit("What is your name?", "name"),
		"greeting":     sampling("Say hello."),
		"client_roots": &mcp.ListRootsParams{},
	}, []byte("all"))
}

func askTwice(c *kernel.Call) (kernel.Text, error) {
	switch string(c.State()) {
	case "round-2":
		if color, ok := accepted(c, "step2", "color"); ok {
			return kernel.Text("Done: favourite colour " + color), nil
		}
		return "", kernel.AskInput(mcp.InputRequestMap{"step2": elicit("Your favourite colour?", "color")}, []byte("round-2"))
	case "round-1":
		if _, ok := accepted(c, "step1", "name"); ok {
			return "", kernel.AskInput(mcp.InputRequestMap{"step2": elicit("Your favourite colour?", "color")}, []byte("round-2"))
		}
	}
	return "", kernel.AskInput(mcp.InputRequestMap{"step1": elicit("What is your name?", "name")}, []byte("round-1"))
}

func askDeclared(c *kernel.Call) (kernel.Text, error) {
	if len(c.InputResponses()) > 0 {
		return "Thanks: answered what was asked", nil
	}
	caps := c.ClientCapabilities()
	reqs := mcp.InputRequestMap{}
	if caps != nil && caps.Sampling != nil {
		reqs["greeting"] = sampling("Say hello.")
	}
	if caps != nil && caps.Elicitation != nil {
		reqs["user_name"] = elicit("What is your name?", "name")
	}
	if len(reqs) == 0 {
		return "The client declared nothing to ask", nil
	}
	return "", kernel.AskInput(reqs, nil)
}

// addMRTRPrompt adds the prompt of input-required-result-non-tool-request:
// prompts/get asks by elicitation first (no state: the prompt changes
// nothing), then returns its messages.
func addMRTRPrompt(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Title: "Prompt Asking For Input",
		Description: "Asks for context by elicitation, then returns a prompt using it."},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if r, ok := req.Params.InputResponses["user_context"].(*mcp.ElicitResult); ok && r != nil && r.Action == "accept" {
				return prompt("A prompt with elicited context",
					&mcp.TextContent{Text: fmt.Sprintf("Context: %v", r.Content["context"])}), nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{
				"user_context": elicit("What context should the prompt use?", "context")}}, nil
		})
}
