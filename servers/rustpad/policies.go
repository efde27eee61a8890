package rustpad

import "github.com/bulwarkmcp/bulwark/kernel"

// The tools' safety policies, in one place. Every tool states all four
// hints (the MCP default of destructiveHint is true, so leaving one out
// would say the opposite of what is meant). Every tool is open-world: it
// talks to the Rustpad instance.
//
//   - Reads are read-only. get_document_info opens a WebSocket, which makes
//     Rustpad create an empty pad in memory if none exists and refresh its
//     expiry; it never changes a pad's text, language or users, so it is
//     declared read-only and its description says so.
//   - set_document overwrites the whole pad: destructive, and gated (the
//     security page: the old content is unrecoverable). The token is bound
//     to the pad id and the fingerprint of the text being replaced (the
//     preview's Target) and to the replacement text (Payload).
//   - replace_in_document is destructive: it removes the searched text. It
//     is not gated — the security page gates only set_document, and what it
//     removes is exactly the text the caller named in "search", so nothing
//     the caller has not seen is lost; it refuses an ambiguous single
//     replacement instead.
//   - set_language overwrites the editor language: destructive (in the sense
//     of the house rule "may overwrite something"), idempotent, not gated.
//   - append_to_document and create_document only add: not destructive.
//     create_document refuses a pad that is not empty. Neither is
//     idempotent: a second call adds again (or, for create_document without
//     an id, creates another pad).

// readOnly is the policy of every read tool.
var readOnly = kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes,
	OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open}

// write is the policy of a tool that changes a pad.
func write(destructive, idempotent kernel.YesNo, gate kernel.Gate) kernel.Policy {
	return kernel.Policy{ReadOnly: kernel.No, Destructive: destructive, Idempotent: idempotent,
		OpenWorld: kernel.Yes, Confirm: gate, Tier: kernel.Open}
}

// Policies by tool.
//
// set_document is gated Always, but its preview reads the pad and says
// NothingToLose when it is empty (the session tells an empty pad from
// history that has not arrived, and /api/text confirms it), so only a
// non-empty pad asks for a token, as the security page says.
var (
	createPolicy   = write(kernel.No, kernel.No, kernel.Never)
	appendPolicy   = write(kernel.No, kernel.No, kernel.Never)
	setPolicy      = write(kernel.Yes, kernel.Yes, kernel.Always(kernel.Bind{Target: []string{"id"}, Payload: []string{"text"}}).Described("when the pad holds text"))
	replacePolicy  = write(kernel.Yes, kernel.No, kernel.Never)
	languagePolicy = write(kernel.Yes, kernel.Yes, kernel.Never)
)
