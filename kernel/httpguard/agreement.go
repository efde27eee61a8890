package httpguard

import (
	"net/http"
	"strings"
)

// headerVersion is the first protocol version whose mirrored request
// headers (Mcp-Method, Mcp-Name, Mcp-Param-*) are defined (SEP-2243).
const headerVersion = "2026-07-28"

// IsModernVersion reports whether an MCP-Protocol-Version value is
// headerVersion or later. Versions are dates, so this is a string
// comparison; unknown later versions count as modern. It is the go-sdk's
// own test, so both layers agree on which requests carry trusted headers.
func IsModernVersion(v string) bool { return v != "" && v >= headerVersion }

// mismatch is a header-agreement failure; its text is fixed (never a
// request value), so it is safe to send.
type mismatch string

func (m mismatch) Error() string        { return "header_mismatch: " + string(m) }
func (m mismatch) Is(target error) bool { return target == errHeaderMismatch }

// headerAgreement checks that the mirrored request headers agree with the
// body (MCP 2026-07-28, SEP-2243) and answers HTTP 400 with JSON-RPC -32020,
// echoing the request id, when they do not.
//
// For modern requests (MCP-Protocol-Version >= 2026-07-28): Mcp-Method must
// equal the body's method, and for tools/call, prompts/get and
// resources/read Mcp-Name must equal params.name or params.uri once its
// Base64 sentinel form is decoded. For every request a _meta protocolVersion
// must equal the MCP-Protocol-Version header. Older requests carry headers
// nobody validated: the Handler removes Mcp-Method, Mcp-Name and
// Mcp-Param-* from them, so no later stage can use them for a decision.
//
// The body is parsed once (see RequestMessage) and the Message stays in the
// context for later stages. Bodies that are not one JSON-RPC message are
// refused here: 400 with -32700 (not JSON) or -32600 (a batch, or not a
// JSON-RPC 2.0 message). Batches are refused at every version: they were
// removed in 2025-06-18, and every policy stage after this one reasons about
// exactly one message.
//
// The go-sdk (v1.8.0) compares Mcp-Name raw, so it would reject the correct
// Base64 form that this guard accepts. After a successful check the Handler
// therefore rewrites a sentinel Mcp-Name to its decoded value. It cannot
// delete it instead: the SDK answers -32020 to a modern tools/call,
// prompts/get or resources/read without Mcp-Name. The rewritten value lives
// only in the in-process header map; a proxy that forwards the request over
// the wire must re-encode it with EncodeHeaderValue (Go's client refuses
// header values with control characters, so a missed re-encoding fails
// closed). Mcp-Param-* values are left to the SDK, which decodes them and
// knows the tool schemas. The zero value is ready to use.
type headerAgreement struct{}

// Check compares the headers with the parsed body; it changes nothing.
// Errors wrap errHeaderMismatch.
func (headerAgreement) Check(h http.Header, env Message) error {
	versions := h.Values("Mcp-Protocol-Version")
	if len(versions) > 1 {
		return mismatch("repeated MCP-Protocol-Version header")
	}
	version := ""
	if len(versions) == 1 {
		version = versions[0]
	}
	if env.Response {
		return nil
	}
	if env.ProtocolVersion != "" && env.ProtocolVersion != version {
		return mismatch("MCP-Protocol-Version header does not match _meta " + metaKeyProtocolVersion)
	}
	if !IsModernVersion(version) {
		return nil
	}
	methods := h.Values("Mcp-Method")
	switch {
	case len(methods) != 1 || methods[0] == "":
		return mismatch("Mcp-Method header missing or repeated")
	case methods[0] != env.Method:
		return mismatch("Mcp-Method header does not match the body's method")
	}
	return checkName(h, env)
}

func checkName(h http.Header, env Message) error {
	target, ok := env.Target()
	if !ok {
		return nil
	}
	field := "params.name"
	if env.Method == "resources/read" {
		field = "params.uri"
	}
	names := h.Values("Mcp-Name")
	if len(names) != 1 || names[0] == "" {
		return mismatch("Mcp-Name header missing or repeated for " + env.Method)
	}
	decoded, err := decodeHeaderValue(names[0])
	if err != nil {
		return mismatch("Mcp-Name header is not a valid plain or base64 value")
	}
	if decoded != target {
		return mismatch("Mcp-Name header does not match " + field)
	}
	return nil
}

// Normalize prepares checked headers for the next handler: a sentinel
// Mcp-Name is replaced by its decoded value for modern requests, and the
// mirrored headers are removed from older ones. Call it only after Check
// passed.
func (headerAgreement) Normalize(h http.Header, env Message) {
	if !IsModernVersion(h.Get("Mcp-Protocol-Version")) {
		for k := range h {
			if k == "Mcp-Method" || k == "Mcp-Name" || strings.HasPrefix(k, "Mcp-Param-") {
				delete(h, k)
			}
		}
		return
	}
	if target, ok := env.Target(); ok && h.Get("Mcp-Name") != target {
		h.Set("Mcp-Name", target) // Check proved it decodes to target
	}
}

// Handler parses the body (once), applies Check, normalizes the headers
// and calls next.
func (a headerAgreement) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, st, created := withState(r)
		if created {
			defer st.release()
		}
		env, err := RequestMessage(r)
		if err != nil {
			writeCheckError(w, nil, err)
			return
		}
		if err := a.Check(r.Header, env); err != nil {
			writeCheckError(w, env.ID, err)
			return
		}
		a.Normalize(r.Header, env)
		next.ServeHTTP(w, r)
	})
}
