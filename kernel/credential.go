package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
)

// ErrMalformedCredential is the cause (errors.Is) of the unauthenticated
// error Call.Credential returns when the request sent the credential's
// header malformed or more than once — as against not at all. A server that
// falls back to another credential of the caller when none was sent must
// not fall back when one was sent malformed.
var ErrMalformedCredential = errors.New("kernel: malformed credential header")

// maxCredentialBytes caps one credential value.
const maxCredentialBytes = 8 << 10

// redacted is what every printed form of a credential value shows.
const redacted = "[redacted]"

// Credential is a provider credential a handler may need. With
// Options.BYOK over HTTP it comes from each request's own header (bring
// your own key) and is never stored; otherwise it is Value. The value never
// prints: fmt (every verb), log/slog and encoding/json show "[redacted]".
type Credential struct {
	// Name is how handlers ask for it: call.Credential(Name).
	Name string
	// Provider names the upstream in the fail-closed messages
	// "Missing <Provider> credentials" and "Malformed <Provider>
	// credentials".
	Provider string
	// Header is the request header that carries it under BYOK. It may not
	// be a header authentication reads (Authorization, X-API-Key) or
	// Cookie, and two credentials may not share one.
	Header string
	// Value is the configured credential (stdio, single tenant): 1 to 8192
	// bytes of printable ASCII, one token or a scheme and a token
	// separated by one space, or empty. It is never
	// logged, returned or audited.
	Value string
}

// String shows the declaration with the value redacted.
func (c Credential) String() string {
	return fmt.Sprintf("kernel.Credential{Name:%q Provider:%q Header:%q Value:%s}", c.Name, c.Provider, c.Header, redacted)
}

// GoString is String, for %#v.
func (c Credential) GoString() string { return c.String() }

// Format prints String for every fmt verb.
func (c Credential) Format(f fmt.State, _ rune) { f.Write([]byte(c.String())) }

// LogValue shows the declaration with the value redacted, for log/slog.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", c.Name), slog.String("provider", c.Provider),
		slog.String("header", c.Header), slog.String("value", redacted))
}

// MarshalJSON encodes the declaration with the value redacted.
func (c Credential) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct{ Name, Provider, Header, Value string }{c.Name, c.Provider, c.Header, redacted})
}

// credential is a declared credential as the server keeps it. The
// configured value lives in a closure, so that a reflection-based printer
// walking into a Server sees only a function address.
type credential struct {
	name, provider, header string
	value                  func() string
}

// checkCredentials validates the declarations and returns the server's
// form of them. Invalid declarations fail here, at startup.
func checkCredentials(list []Credential, byok bool) ([]credential, error) {
	var out []credential
	for _, c := range list {
		if err := checkCredential(c, byok, out); err != nil {
			return nil, fmt.Errorf("kernel: credential %q: %w", c.Name, err)
		}
		v := c.Value
		out = append(out, credential{name: c.Name, provider: c.Provider,
			header: textproto.CanonicalMIMEHeaderKey(c.Header), value: func() string { return v }})
	}
	return out, nil
}

func checkCredential(c Credential, byok bool, before []credential) error {
	header := textproto.CanonicalMIMEHeaderKey(c.Header)
	switch {
	case c.Name == "" || c.Provider == "" || strings.ContainsFunc(c.Provider, isControl):
		return errors.New("needs a name and a provider name without control characters")
	case slices.ContainsFunc(before, func(b credential) bool { return b.name == c.Name }):
		return errors.New("declared twice")
	case byok && c.Header == "":
		return errors.New("BYOK needs a header")
	case c.Header != "" && identity.CheckCredentialHeader(c.Header) != nil:
		return fmt.Errorf("header: %w", identity.CheckCredentialHeader(c.Header))
	case c.Header != "" && slices.ContainsFunc(before, func(b credential) bool { return b.header == header }):
		return fmt.Errorf("header %s is used by another credential", header)
	case c.Value != "" && !validCredential(c.Value):
		return errors.New("the configured value is not 1 to 8192 bytes of printable ASCII, one token or a scheme, one space and a token (value not shown)")
	case c.Value != "" && tooShort(c.Value):
		return fmt.Errorf("the configured value's token is shorter than %d bytes, too short to be removed safely from what clients receive (value not shown)", egress.MinSecretLen)
	}
	return nil
}

// tooShort reports whether a credential's token (the value, or what
// follows its scheme) is too short for the egress gate to remove safely.
func tooShort(v string) bool {
	parts := credentialParts(v)
	return egress.CheckSecret(parts[len(parts)-1]) != nil
}

// validCredential reports whether v is 1 to 8192 bytes of printable ASCII
// in the shape of HTTP credentials (RFC 9110 §11.4): one token, or a scheme
// and a token separated by exactly one space ("ApiKey org:key", "Bearer
// t"). Nothing else — no control character, no other blank — so nothing
// could split or inject a header upstream.
func validCredential(v string) bool {
	if v == "" || len(v) > maxCredentialBytes {
		return false
	}
	spaces := 0
	for i := range len(v) {
		switch {
		case v[i] == ' ' && i > 0 && i < len(v)-1:
			spaces++
		case v[i] <= ' ' || v[i] > '~':
			return false
		}
	}
	return spaces <= 1
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// credential returns the named credential for a call. Under BYOK over HTTP
// it is the request's own header, sent exactly once; there is no fallback
// to a configured value. A missing or malformed credential is a tool error
// (unauthenticated) that names the provider and the header, never the
// value.
func (s *Server) credential(c *Call, name string) (string, error) {
	i := slices.IndexFunc(s.creds, func(cr credential) bool { return cr.name == name })
	if i < 0 {
		return "", fmt.Errorf("kernel: credential %q is not declared", name)
	}
	cr := s.creds[i]
	if !s.opts.BYOK || c.header == nil {
		if v := cr.value(); v != "" {
			return v, nil
		}
		return "", &Error{Code: Unauthenticated, Message: fmt.Sprintf("Missing %s credentials", cr.provider),
			Hint: "Set the credential in the server's environment."}
	}
	v, err := fromHeader(c.header, cr.header)
	switch {
	case err != nil:
		return "", &Error{Code: Unauthenticated, Message: fmt.Sprintf("Malformed %s credentials", cr.provider),
			Hint:  fmt.Sprintf("Send exactly one %s request header: 1 to 8192 printable ASCII characters, a token of at least %d characters or a scheme, one space and such a token.", cr.header, egress.MinSecretLen),
			Cause: fmt.Errorf("%w: %w", ErrMalformedCredential, err)}
	case v == "":
		return "", &Error{Code: Unauthenticated, Message: fmt.Sprintf("Missing %s credentials", cr.provider),
			Hint: fmt.Sprintf("Send it in the %s request header.", cr.header)}
	}
	return v, nil
}

// fromHeader reads a BYOK header: "" when absent or blank, an error
// (which never quotes the value) when sent twice or malformed.
func fromHeader(h http.Header, name string) (string, error) {
	vals := h.Values(name)
	switch {
	case len(vals) == 0:
		return "", nil
	case len(vals) > 1:
		return "", fmt.Errorf("BYOK header %s sent %d times", name, len(vals))
	}
	v := strings.TrimSpace(vals[0])
	if v != "" && !validCredential(v) {
		return "", fmt.Errorf("BYOK header %s: %d bytes, not printable ASCII in the shape of credentials, or over 8192", name, len(v))
	}
	if v != "" && tooShort(v) {
		return "", fmt.Errorf("BYOK header %s: its token is shorter than %d bytes, too short to be removed safely from results", name, egress.MinSecretLen)
	}
	return v, nil
}

// withoutCredentials returns a copy of h without the credential headers.
func (s *Server) withoutCredentials(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	h = h.Clone()
	for _, cr := range s.creds {
		if cr.header != "" {
			h.Del(cr.header)
		}
	}
	return h
}

// CredentialFrom returns the named credential of the call ctx belongs to;
// outside a call it fails closed like a missing credential.
func CredentialFrom(ctx context.Context, name string) (string, error) {
	c := CallFrom(ctx)
	if c == nil {
		return "", &Error{Code: Unauthenticated, Message: "Missing credentials", Hint: "This operation runs only inside a tool call."}
	}
	return c.Credential(name)
}
