// Package llm is an in-process fake of an OpenAI-compatible chat
// completions endpoint (POST /v1/chat/completions), for tests of the
// optional AI enrichment of `bulwark vdb`. It plays a well-behaved model and
// a hostile one, so a test can show that nothing a model answers changes
// which endpoint is called, leaves the untrusted-data envelope, or is
// accepted without matching the tool's schema.
//
// # Use
//
//	model := llm.Start(t, &llm.Options{APIKey: "model-key"})
//	cfg.ModelURL = model.URL() // http://127.0.0.1:P/v1
//	model.SetMode(llm.ModeToolCalls)
//	// ... call a tool that enriches ...
//	req := model.Requests()[0]
//	req.System()                                   // the fixed system prompt
//	req.OnlyInsideUntrusted("IGNORE PREVIOUS")     // upstream text stayed in the envelope
//	req.Chat.Schema                                // the per-tool schema sent
//
// # Faithful
//
//   - One route, POST /v1/chat/completions; another path → 404, another
//     method → 405, in OpenAI's error shape {"error":{message,type,param,
//     code}}.
//   - "Authorization: Bearer <key>" required (Options.APIKey pins the value)
//     → 401; a body that is not JSON, lacks model or messages, or asks for
//     stream: true → 400. Message content may be a string or an array of
//     text parts.
//   - The answer is a chat.completion: id, object, created, model,
//     choices[{index, message{role, content, refusal}, finish_reason}],
//     usage.
//   - The schema is read from response_format.json_schema.schema
//     (ChatRequest.Schema); Instance builds a value valid against the subset
//     of JSON Schema the fake knows, Violations values that each break it.
//
// # Modes
//
// ModeSchema (well-behaved) answers a schema-valid object. The hostile
// modes are listed by HostileModes: ModeInstructions (prose that tells the
// caller to call a tool and fetch a URL), ModeToolCalls and
// ModeFunctionCall (tool-call attempts naming vdb_request and a /cli.*
// path), ModeInvalidJSON, ModeSchemaViolation (cycling through
// Violations), ModeOversized (Options.OversizeBytes, 4 MiB by default),
// ModeInjectedEndpoint (schema-valid, but suggesting an endpoint, URL,
// parameter and tool, with extra steering fields when the schema allows),
// ModeRefusal, ModeNoChoices, ModeServerError; ModeSlow waits
// Options.Delay. SetMode sets the mode, Script queues modes for the next
// requests, SetContent fixes the content exactly.
//
// Every request is recorded (Requests) with Authorization redacted;
// Request.Contains searches the unredacted request, e.g. to prove the VDB
// credential never reached the model. Everything listens on 127.0.0.1.
package llm
