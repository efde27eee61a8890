// Package egress is the last step before any byte reaches a client: one
// gate over every message bulwark sends — results, errors, every list,
// notifications, elicitation, sampling and input requests — on stdio and
// Streamable HTTP, on the kernel's fast paths and the go-sdk's.
//
// The gate (Message) walks the decoded string values of the final JSON-RPC
// message, object keys included, and for each one:
//
//   - removes every registered secret (a Secrets set): the value is looked
//     for after invisible and format characters are removed (zero-width
//     characters, soft hyphens, Unicode tags, bidirectional controls, every
//     default-ignorable code point), in the text as it is and with JSON,
//     percent and \u escapes inside it decoded, as it is and base64-encoded
//     at any offset, and as a prefix cut where the envelope or the error
//     sanitizer cut a string; each finding becomes "[redacted]";
//   - cleans it as untrusted text (kernel/untrusted.CleanString: invisible
//     characters removed, bidirectional controls made visible, envelope
//     tags neutralized), except that the result text of a tools/call keeps
//     the envelope's own tags where the envelope wrote them.
//
// A message with nothing to change is returned as it is, without a copy.
//
// What it cannot do: an upstream that holds a credential can always write
// it in a form no scrubber recognizes (split across fields, hex, reversed,
// encrypted). The gate stops echoes and the encodings above, not a
// deliberate exfiltration by a party that holds the secret. A value shorter
// than MinSecretLen cannot be scrubbed without removing ordinary words:
// CheckSecret refuses it where it enters.
//
// The package imports nothing from package kernel; the kernel applies it to
// its transports (its stdio writer and its HTTP response writer).
package egress
