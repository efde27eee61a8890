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
// Over HTTP (serve.go and kernel/httpguard), in this order; stdio starts at
// step 9 with the principal "local":
//
//	 1  flood guard per client address           httpguard
//	 2  Host allowlist (DNS rebinding)           httpguard  -> 403
//	 3  Origin / CORS                            httpguard  -> 204 / 403 cors_forbidden
//	 4  method: POST only                        httpguard  -> 405
//	 5  Content-Type: application/json           httpguard  -> 415
//	 6  body size, declared and read             httpguard  -> 413
//	 7  trace headers validated or dropped       httpguard
//	 8  authentication -> principal              identity   -> 401 / 403
//	 9  Mcp-Method / Mcp-Name agree with body    httpguard  -> 400 -32020 (2026-07-28+)
//	10  tier check, then rate limit              admit.go   -> tool error / 429 -32000 / 503 -32001
//	11  argument validation                      handler    -> tool error invalid_argument
//	12  confirmation gate                        handler    -> tool error confirmation_required
//	13  the tool's handler, with its Call
//	14  result shaping: untrusted envelope       handler    (every channel)
//	15  audit record                             handler    (never argument values)
//
// After step 10, stateless tools/call, tools/list and ping are answered by
// the kernel's fast path (fastpath.go) from the message parsed in step 9,
// through the same functions for steps 10 to 15 (admitCall and the tool's
// handler); everything else, and everything when HTTPOptions.DisableFastPath
// is set, goes through the go-sdk's handler. Both give the same answers
// (TestFastPathEquivalence, FuzzFastPathEquivalence).
//
// Validation (11) runs before the gate (12), the reverse of the design's
// order, so that a token is only ever issued for arguments that can run; no
// upstream request is made before either.
//
// # Errors
//
// A handler returns a *Error for anything the client can act on: bad input,
// an upstream refusal. Any other error means our own infrastructure broke: the
// client sees "internal" with an error id, and the detail is logged under the
// same id. Argument-validation failures are tool errors (isError: true), as
// SEP-1303 asks; an unknown tool is a protocol error (-32602).
package kernel
