// Package conformance is a test-only MCP server for the official conformance
// suite (@modelcontextprotocol/conformance) and other third-party clients.
//
// It exposes the fixture names the suite's server scenarios call
// (test_simple_text, test://static-text, test_simple_prompt, …) and is
// built on the kernel exactly as a product server is: kernel.New declares
// the tools, with their policies, and Server.HTTPHandler serves them behind
// every guard (flood, Host, Origin, method, media type, body limit, trace,
// header agreement, admission). Nothing here weakens the kernel to please
// the suite; where the kernel's controls change what a scenario expects (an
// image result becomes enveloped text, say), the fixture keeps the kernel's
// behaviour and test/e2e/baseline-*.yml lists the failure with its reason.
//
// The kernel manages tools only. Resources, resource templates and prompts
// are registered directly on the underlying go-sdk server (Server.MCP), and
// completion is answered by a receiving middleware there, because
// kernel.New owns the go-sdk ServerOptions.
//
// The binary in cmd/fixture serves it for scripts/e2e. It must never serve
// anything but loopback: it has no authentication.
package conformance
