// Package pin pins the tool definitions of a gateway's upstreams: the
// rug-pull defence.
//
// An MCP server's tools are text a model reads and obeys. A server that
// was approved once can change a tool's description, schema or
// annotations later — at its next start or mid-session — and the model
// follows the new text. Check canonicalizes the whole tool object as it
// arrives on the wire (RFC 8785, every member, unknown ones included),
// hashes it with SHA-256 and compares it with the pin recorded for that
// upstream and tool name:
//
//   - equal: the tool is shown;
//   - never seen: pinned and shown (TrustOnFirstUse, logged), or hidden
//     until approved (RequireApproval);
//   - changed, or a pinned definition under a new name (a rename): hidden,
//     with a reason that names the upstream, the tool and what changed
//     ("description changed, inputSchema.properties.sidenote added"), and
//     recorded as pending.
//
// `bulwark gateway approve` lists the pending definitions (Store.Pending),
// shows each as a diff against its pin with the findings of Scan
// (WriteReport), and pins what the person confirms (Store.Approve).
//
// The state lives in a file (Open: one JSON file per gateway, mode 0600,
// written atomically, verified on every read: a tampered file is an error,
// never a reset), in Redis (OpenRedis: one key per gateway, shared by its
// replicas) or in memory (OpenMemory).
// docs/gateway-pinning.md says what is pinned and what the scan does and
// does not catch.
package pin
