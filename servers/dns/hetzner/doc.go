// Package hetzner implements dns.Provider against the Hetzner Cloud DNS API
// (https://api.hetzner.cloud/v1), as described in the project's reference
// hetzner-cloud-dns-api.md ("the reference" below).
//
// Request hygiene, all enforced here and pinned by tests:
//
//   - the base URL is validated (kernel/upstream.ValidateBaseURL) before any
//     token is sent;
//   - the token comes from a Credentials function per call (one token from
//     the environment, or BYOK per HTTP request from the context); a missing
//     or malformed token fails closed, and the token never appears in an
//     error, even when the API echoes it;
//   - path segments are validated (zone: [A-Za-z0-9._-]+, not "." or "..";
//     RRSet names also "@" and "*"; types from dns.RRSetTypes) and put on the
//     wire verbatim, so "@" and "*" are never percent-encoded (the API does
//     not decode %40);
//   - request bodies are typed wire structs built field by field, never the
//     caller's maps spread into JSON;
//   - redirects are refused, every attempt has a timeout, bodies are capped;
//     GETs are retried on 429/502/503/504, other methods only on 429 (a
//     rate-limited request was not executed).
//
// Errors: an API refusal is a *dns.Error with the API's code, its message
// sanitized (cut to 2000 characters, HTML dropped) and, for invalid_input,
// the invalid fields; a non-JSON answer (a proxy's HTML page) is code
// CodeUpstreamError; a 429 is always rate_limit_exceeded with RetryAfter
// from the headers. Bad arguments caught before sending are *dns.Error
// invalid_input with Status 422, as the API would answer. Anything else
// (network, timeout, redirect, oversized or malformed answer, credentials)
// is a plain error wrapping an upstream or package sentinel.
package hetzner
