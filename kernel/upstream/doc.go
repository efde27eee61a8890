// Package upstream is bulwark's hardened outbound HTTP client: the one way a
// server talks to the API it fronts.
//
// The upstream is treated as hostile input. A Client therefore
//
//   - refuses redirects, so credentials are never replayed to another host;
//   - asks Options.CheckURL, when set, about every request's final URL
//     before sending it (ErrURLRefused), so a server's route rules hold for
//     every request it makes, whichever code built the URL;
//   - bounds every attempt with a timeout (default 30 s);
//   - reads success bodies through a hard cap (default 8 MiB) and error bodies
//     through a smaller one, never trusting Content-Length;
//   - retries only what is safe to retry: a 429 (the request was not executed)
//     for any method, and 502/503/504 only for safe or declared-idempotent
//     requests, with bounded, jittered, context-aware waits;
//   - forwards W3C trace headers from the context only when they are valid;
//   - counts calls, retries and bytes into a context-scoped Meter for the audit;
//   - keeps TLS settings (including InsecureSkipVerify) on its own transport,
//     never on http.DefaultTransport.
//
// Error bodies are upstream text: SanitizeErrorBody cuts them to
// MaxErrorTextRunes characters and drops HTML pages entirely.
//
// ValidateBaseURL checks a configured base URL before any credential is sent:
// https only (http only to loopback hosts), no userinfo, no query or fragment.
// Its errors never echo the value, which may contain a secret.
//
// JSONBudget.Check bounds what decoding an answer would build — values and
// nesting, counted by the kernel's one JSON scanner before anything is
// built — since memory follows values, not bytes.
//
// The package imports no other bulwark package but kernel/internal/jsonscan,
// the kernel's JSON grammar.
package upstream
