// Package httpguard holds the HTTP transport guards of bulwark's MCP
// kernel: the checks a Streamable HTTP request passes before the MCP SDK
// sees it.
//
// Each guard follows net/http's CrossOriginProtection: a small type whose
// zero value (or New with nil options) is the safe default, a Check that
// decides without answering, and a Handler that answers refusals with a
// JSON-RPC error body (WriteError) rather than plain text. Knobs that weaken
// a guard are named Insecure… or Disable….
//
// Pipeline composes them in the kernel's order:
//
//	1 floodGuard       per client address (IPv6 by /64)        429 + Retry-After, -32000 rate_limited
//	2 hostGuard        DNS rebinding, every interface          403 host_forbidden
//	3 corsGuard        Origin allowlist, preflight 204/403     403 cors_forbidden
//	4 postOnly         stateless transport                     405 + Allow: POST
//	5 ContentType      application/json, identity, Accept      415 / 406
//	6 bodyLimit        declared and actual length              413 body_too_large
//	7 traceHeaders     W3C traceparent/tracestate              invalid ones removed
//	8 [auth]           supplied by the caller
//	9 headerAgreement  Mcp-Method/Mcp-Name vs body (2026-07-28) 400 -32020
//
// The body is read once (readBody) and parsed once (RequestMessage); later
// stages take the Message from the context (messageFromContext) and the
// valid trace headers with TraceFromContext. What the guards learn lives in
// the request's one kernel/internal/reqscope.Scope, which authentication and
// the kernel's admission share, so the request is copied once for all.
//
// With the go-sdk behind the pipeline, set
// StreamableHTTPOptions.DisableLocalhostProtection (the Hosts guard decides,
// on every interface) and Stateless; the SDK's own 4 MiB limit stays above
// DefaultMaxBodyBytes so this package's JSON 413 is the one clients see.
package httpguard
