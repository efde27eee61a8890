// Package session is the Rustpad WebSocket client of bulwark. It treats the
// upstream server as hostile input:
//
//   - every wait has a deadline: the handshake as a whole
//     ([Options.HandshakeTimeout]), each edit or language acknowledgement
//     ([Options.AckTimeout]) and the silence allowed between two messages
//     while waiting ([Options.ReadTimeout]); the caller's context applies too;
//   - the inbound queue (messages and bytes), the frame size (the WebSocket
//     read limit), the number of tracked users and the document size are
//     capped;
//   - every message is decoded strictly; a History is validated structurally
//     (u64 ids, normal-form operations, contiguous revisions) and each
//     operation must apply to the current text;
//   - any violation, any deadline and any failure mid-handshake ends the
//     session: the connection is closed, the reader goroutine has returned,
//     and the error wraps one of the sentinel errors below.
//
// # Connect sequence and empty pads
//
// [Dial] follows the reference's connect sequence: read Identity, send the
// invisible barrier CursorData{cursors:[], selections:[]}, and fold messages
// until the server echoes it as UserCursor with our own id. The server sends
// the echo after the whole initial burst, so when Dial returns, [State] holds
// the server's text, revision, language and users as of that moment. An
// empty Text then really means an empty pad, never "History not here yet"
// (a never-edited pad sends no History at all).
//
// # Edits
//
// A session never applies its own edit locally: it folds every History entry
// in server order, its own echo included, so its text always equals a prefix
// of the server's history. [Session.Edit] takes an operation on the text at
// a revision the caller observed, transforms it (as the first argument, like
// the server) over remote operations folded since, sends it and waits for
// the server's echo, which is the only acknowledgement. After an
// acknowledgement deadline or a lost connection the outcome is unknown
// ([ErrOutcomeUnknown]): the edit may have been applied; re-read before
// retrying.
//
// A Session is safe for concurrent use; operations are serialised. It is
// meant to be short-lived: dial, read, perhaps write, close. Messages
// arriving while no method runs are queued (and capped) and folded at the
// next call.
//
// Pass an [Options.HTTPClient] or [Options.TLSConfig] to change TLS for this
// connection only; the package never touches process-wide settings.
package session
