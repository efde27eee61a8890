// Package kernel turns declared tools into a hardened MCP server on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// A server declares its tools as data — NewTool for typed tools, whose
// input schema comes from the Go type, and NewDynamicTool for tools whose
// schema is known only at run time — each with an explicit Policy: the
// read-only, destructive, idempotent and open-world hints, a confirmation
// gate, and a tier. New refuses a tool whose policy is incomplete, applies
// read-only mode (write tools are not registered at all) and the allow and
// deny lists, and registers the rest.
//
// # The request pipeline
//
// HTTP lives in http.go: HTTPHandler builds the guard chain
// (httpguard.NewPipeline, with identity as its authentication stage), the
// admission step and the go-sdk's stateless Streamable HTTP handler;
// ListenAndServe runs it with timeouts and graceful shutdown. Stdio lives
// in serve.go (ServeStdio) and starts at step 10 with the principal
// "local". Every place a request can be refused, in order:
//
//	 1  flood guard per client address      httpguard/flood.go     -> 429 -32000 rate_limited
//	 2  Host allowlist (DNS rebinding)      httpguard/host.go      -> 403
//	 3  Origin / CORS                       httpguard/cors.go      -> 204 / 403 cors_forbidden
//	 4  method: POST only                   httpguard/method.go    -> 405 with Allow
//	 5  Content-Type, encoding, Accept      httpguard/contenttype  -> 415 / 406
//	 6  body size, declared and read        httpguard/body.go      -> 413
//	 7  trace headers validated or dropped  httpguard/trace.go     (never refuses)
//	 8  authentication -> principal         identity               -> 401 / 403 / 400 / 503
//	 9  JSON-RPC message parsed once        httpguard/message.go   -> 400 -32700 / -32600
//	    (no batch, exact numeric ids, no repeated params.arguments)
//	    Mcp-Method / Mcp-Name agree         httpguard/agreement.go -> 400 -32020 (2026-07-28+)
//	 9a an answer whose call another        stateroute.go          -> forwarded there, its answer
//	    replica holds (Options.StateRouter                            relayed / 503 -32001
//	    only; its requestState opens for                              store_unavailable / 502 -32603
//	    the caller and the tool), or a                                replica_unreachable
//	    tasks/get|result|cancel of a task
//	    another holds (a TaskRouter)
//	10  tier check, then rate limit, once   admit.go               -> tool error tier / 429 -32000 /
//	                                                                  503 -32001 store_unavailable
//	10a a method of an undeclared feature   capabilities.go        -> -32601 (404 on 2026-07-28)
//	    a client capability the tool needs  capabilities.go        -> -32021 (400 on 2026-07-28)
//	    and the request did not declare
//	11  unknown tool                        go-sdk                 -> -32602
//	    arguments: repeated keys, lone      handler.go             -> tool error invalid_argument
//	    surrogates, schema validation
//	    (compiled once per tool by New:     internal/argcheck, validation.go
//	    structured failure -> readable error)
//	12  authorization (Options.Authz only)  authorize.go           -> tool error permission_denied
//	13  the tool's preview: preconditions   handler.go + the tool  -> the tool's own error, no token
//	    a requestState (SEP-2322) that is   mrtr.go                -> -32602 (nothing runs)
//	    tampered, expired, spent, another
//	    principal's, tool's or arguments'
//	14  confirmation gate: the person by    mrtr_consent.go        -> input_required (asked) /
//	    elicitation where the client                                  tool error confirmation_declined
//	    declares it, else a token           handler.go             -> tool error confirmation_required /
//	                                                                  store_unavailable
//	15  the tool's handler, with its Call   the tool               -> its *Error, or internal + error id
//	16  result shaping: untrusted envelope  handler.go, content.go (every channel that carries
//	                                                                  upstream text)
//	17  audit record                        handler.go, egress.go  (never argument values; the call's
//	                                                                  secrets scrubbed)
//	18  egress gate: every message to the   egress.go, egress_http.go, kernel/egress
//	    client, on every transport — its      (the stdio writer, the HTTP response writer, Connect's
//	    decoded strings scrubbed of the         transport: results, errors, lists, notifications,
//	    registered secrets and cleaned          requests; no channel can go around it)
//
// Over stdio 10a runs before 10, so a refused call spends no rate-limit
// slot; over HTTP admission comes first. Validation (11), authorization (12) and the preview (13) run before the
// gate (14), in this order, so that a token is only ever issued
// for a call that can run and that the caller may make. Authorization
// decides on the canonical target a tool declares (WithTarget); resolving
// it may read (a zone id to its name), but no upstream write is made before
// the gate.
//
// After step 10 a request goes one of two ways to steps 11 to 17: the
// go-sdk's handler (its session, admitMiddleware in admit.go, then the
// tool's handler, handler.go), or a fast path that answers it itself from
// the message parsed once and calls the same admitCall and the same tool
// handler — over HTTP fastpath.go (an event stream for a call that wants
// notifications: fastpath_stream.go; server/discover's result captured from
// the go-sdk once), over stdio fastpath_stdio.go
// (ServeStdio reads the client's lines itself and passes everything it does
// not answer, byte for byte, to the go-sdk's session). Both ways give the
// same answers (TestFastPathEquivalence, FuzzFastPathEquivalence,
// TestStdioFastPathEquivalence, FuzzStdioFastPath). Admission (step 10)
// is decided once, through admitCall, from one of three places: the HTTP
// layer (admission, admit.go), admitMiddleware, or fastResult.
//
// Which requests the fast paths answer is listed rule by rule, each with
// the function that holds it, in docs/architecture.md.
//
// Tasks (MCP 2025-11-25), which the go-sdk does not model, are answered
// by the kernel where it reads raw JSON-RPC, after step 10: the stdio
// front (answersTask) and the HTTP endpoint (tasksHTTP), for a server
// with Options.Tasks (tasks.go). A task-augmented tools/call runs steps 10
// to 17 as any call does, its handler answering TaskCreated; tasks/get,
// tasks/result, tasks/list and tasks/cancel go to the embedder's
// TaskRelay with the caller's principal, and their answers, built by the
// kernel from typed values, pass step 18.
//
// # Errors
//
// A handler returns a *Error for anything the client can act on: bad input,
// an upstream refusal. Any other error means our own infrastructure broke: the
// client sees "internal" with an error id, and the detail is logged under the
// same id. Argument-validation failures are tool errors (isError: true), as
// SEP-1303 asks; an unknown tool is a protocol error (-32602).
package kernel
