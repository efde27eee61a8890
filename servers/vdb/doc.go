// Package vdb is bulwark's Vulnetix vulnerability-database server: read-only
// tools over the VDB v2 GET API, an allowlisted escape hatch (vdb_request),
// and a device-grant sign-in whose handles are sealed (kernel/seal).
//
// The upstream credential is relayed, never interpreted: it comes from the
// server's configuration (stdio), from each HTTP request (BYOK), or from the
// key a sign-in stored for the principal; it is never a tool parameter, and
// the server has no credential of its own. Responses are cached per
// principal and credential, never across them.
package vdb
