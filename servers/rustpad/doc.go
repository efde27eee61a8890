// Package rustpad is the MCP server `bulwark rustpad`: tools that read and
// write the pads of a Rustpad instance (ekzhang/rustpad), with the surface
// of the established rustpad-mcp server (reference §13):
//
//	read   get_document get_document_info get_stats
//	write  create_document set_document append_to_document
//	       replace_in_document set_language
//
// Reads of the text go over HTTP (GET /api/text, which never creates a pad);
// everything else opens one short-lived WebSocket per call through
// servers/rustpad/session, which treats the Rustpad server as hostile
// (deadlines, caps, strict decoding). The state a tool acts on is the one
// observed after the session's connect barrier; a pad that looks empty is
// cross-checked against /api/text and the call fails closed when the two
// disagree (the never-edited-pad trap, reference §7).
//
// Writes are operational-transform operations built from that state (in
// code points) and sent with session.Edit, which transforms them over
// whatever other users did meanwhile: their edits are kept. set_document is
// gated by a confirmation token bound to the pad id, the fingerprint of the
// text it replaces and the replacement text (policies.go says why each tool
// is declared as it is).
//
// Everything read from Rustpad — the text, user names, the language, error
// bodies — is untrusted and reaches the client only inside the kernel's
// envelope (Envelope). Refusals quote pad ids and character counts only.
//
// Config.InsecureTLS turns certificate checks off for this server's own
// connections only: the WebSocket dialer and the /api client each get a
// transport of their own.
package rustpad
