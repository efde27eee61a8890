package identity

import "strings"

// bearerChallenge is a Bearer WWW-Authenticate challenge (RFC 6750 §3, with the
// resource_metadata parameter of RFC 9728 §5.1).
type bearerChallenge struct {
	// ResourceMetadata is the URL of the protected-resource metadata.
	ResourceMetadata string
	// Scope lists every scope the request needs.
	Scope []string
	// Error is the RFC 6750 error code; empty when no token was presented.
	Error string
}

// String renders the challenge, for example
//
//	Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools", error="invalid_token"
//
// Parameters are quoted strings; quotes and backslashes are escaped, and
// control characters and non-ASCII bytes are dropped, so the value is
// always a single safe header line.
func (c bearerChallenge) String() string {
	var params []string
	if c.ResourceMetadata != "" {
		params = append(params, `resource_metadata=`+quote(c.ResourceMetadata))
	}
	if scope := strings.Join(c.Scope, " "); scope != "" {
		params = append(params, `scope=`+quote(scope))
	}
	if c.Error != "" {
		params = append(params, `error=`+quote(c.Error))
	}
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}

// quote returns s as an RFC 9110 quoted-string holding printable ASCII only.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
