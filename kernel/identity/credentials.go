package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// maxCredentialBytes caps one credential header value.
const maxCredentialBytes = 8 << 10

// redacted is what every printed form of Credentials shows.
const redacted = "[redacted]"

// ErrMissingCredentials is wrapped by the error Require returns.
var ErrMissingCredentials = errors.New("identity: missing credentials")

// CredentialSpec declares the headers that carry one provider's
// credentials (BYOK: bring your own key), for example
// {Provider: "Datadog", Headers: []string{"DD-API-KEY", "DD-APPLICATION-KEY"}}.
type CredentialSpec struct {
	// Provider names the upstream in the "Missing <Provider> credentials"
	// message.
	Provider string
	// Headers are the header names that must all be present.
	Headers []string
}

// Validate reports whether the spec is usable: a provider name, at least
// one header, every header a valid field name, none repeated, and none of
// the headers authentication consumes.
func (s CredentialSpec) Validate() error {
	if s.Provider == "" || hasControl(s.Provider) {
		return errors.New("identity: credential spec without a provider name")
	}
	if len(s.Headers) == 0 {
		return fmt.Errorf("identity: credential spec %q declares no headers", s.Provider)
	}
	seen := map[string]bool{}
	for _, h := range s.Headers {
		c := textproto.CanonicalMIMEHeaderKey(h)
		switch {
		case !validToken(h, 128, "!#$%&'*+-.^_`|~"):
			return fmt.Errorf("identity: credential spec %q: %q is not a header name", s.Provider, h)
		case c == headerAuthorization || c == headerAPIKey || c == "Cookie":
			return fmt.Errorf("identity: credential spec %q: %s is reserved for authentication", s.Provider, c)
		case seen[c]:
			return fmt.Errorf("identity: credential spec %q: %s listed twice", s.Provider, c)
		}
		seen[c] = true
	}
	return nil
}

// Credentials holds a caller's provider credentials, by header name. The
// values never print: fmt (every verb), slog, and encoding/json all show
// "[redacted]". Read them only through Require. The zero value is empty.
type Credentials struct {
	// The values live in a closure: a reflection-based printer that walks
	// into an unexported field sees only a function address.
	lookup func(canonicalName string) (string, bool)
	names  []string // sorted canonical names; not secret
}

func newCredentials(m map[string]string) Credentials {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return Credentials{
		lookup: func(name string) (string, bool) { v, ok := m[name]; return v, ok },
		names:  names,
	}
}

// ExtractCredentials collects the headers declared by specs from h. A
// header sent more than once, empty, or longer than 8 KiB is left out, so
// that Require fails closed on it.
func ExtractCredentials(h http.Header, specs ...CredentialSpec) Credentials {
	m := make(map[string]string)
	for _, s := range specs {
		for _, name := range s.Headers {
			vals := h.Values(name)
			if len(vals) != 1 {
				continue
			}
			if v := strings.TrimSpace(vals[0]); v != "" && len(v) <= maxCredentialBytes {
				m[textproto.CanonicalMIMEHeaderKey(name)] = v
			}
		}
	}
	return newCredentials(m)
}

// FixedCredentials returns Credentials with fixed values by header name:
// over stdio the caller's credentials come from the environment, read once
// at startup, and are presented to handlers exactly as BYOK headers are.
// Empty values are left out.
func FixedCredentials(values map[string]string) Credentials {
	m := make(map[string]string, len(values))
	for k, v := range values {
		if v != "" {
			m[textproto.CanonicalMIMEHeaderKey(k)] = v
		}
	}
	return newCredentials(m)
}

// CredentialMiddleware extracts the headers declared by specs into the
// request context (see CredentialsFromContext) and removes them from the
// request passed on, so that no later stage logs or forwards them. It
// fails on an invalid spec.
func CredentialMiddleware(specs ...CredentialSpec) (func(http.Handler) http.Handler, error) {
	for _, s := range specs {
		if err := s.Validate(); err != nil {
			return nil, err
		}
	}
	specs = slices.Clone(specs)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			creds := ExtractCredentials(r.Header, specs...)
			r = r.WithContext(WithCredentials(r.Context(), creds))
			r.Header = r.Header.Clone()
			for _, s := range specs {
				for _, name := range s.Headers {
					r.Header.Del(name)
				}
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

type credentialsKey struct{}

// WithCredentials returns a context that carries c.
func WithCredentials(ctx context.Context, c Credentials) context.Context {
	return context.WithValue(ctx, credentialsKey{}, c)
}

// CredentialsFromContext returns the credentials stored by WithCredentials;
// empty Credentials when there are none.
func CredentialsFromContext(ctx context.Context) Credentials {
	c, _ := ctx.Value(credentialsKey{}).(Credentials)
	return c
}

// MissingCredentialsError is the error of Require. Its message is exactly
// "Missing <Provider> credentials"; it names no header and no value.
type MissingCredentialsError struct {
	Provider string
}

func (e *MissingCredentialsError) Error() string { return "Missing " + e.Provider + " credentials" }

// Unwrap returns ErrMissingCredentials.
func (e *MissingCredentialsError) Unwrap() error { return ErrMissingCredentials }

// Require returns every header declared by spec from the credentials in
// ctx, keyed by the names as spec writes them, or a
// *MissingCredentialsError if any is absent. There is no fallback to a
// server-held credential.
func Require(ctx context.Context, spec CredentialSpec) (map[string]string, error) {
	c := CredentialsFromContext(ctx)
	out := make(map[string]string, len(spec.Headers))
	for _, name := range spec.Headers {
		v, ok := c.get(name)
		if !ok {
			return nil, &MissingCredentialsError{Provider: spec.Provider}
		}
		out[name] = v
	}
	if len(out) == 0 {
		return nil, &MissingCredentialsError{Provider: spec.Provider}
	}
	return out, nil
}

func (c Credentials) get(name string) (string, bool) {
	if c.lookup == nil {
		return "", false
	}
	return c.lookup(textproto.CanonicalMIMEHeaderKey(name))
}

// Names returns the canonical header names present, sorted. Names are not
// secret.
func (c Credentials) Names() []string { return slices.Clone(c.names) }

// String returns "[redacted]".
func (c Credentials) String() string { return redacted }

// GoString returns "[redacted]", for %#v.
func (c Credentials) GoString() string { return redacted }

// Format prints "[redacted]" for every fmt verb.
func (c Credentials) Format(f fmt.State, _ rune) { f.Write([]byte(redacted)) }

// LogValue returns "[redacted]", for log/slog.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON returns "[redacted]" as a JSON string.
func (c Credentials) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText returns "[redacted]".
func (c Credentials) MarshalText() ([]byte, error) { return []byte(redacted), nil }
