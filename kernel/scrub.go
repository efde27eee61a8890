package kernel

import (
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

// credentialParts are the secrets one credential value brings into a call:
// the value, and the token after its scheme ("Bearer t", "ApiKey org:k"),
// which an upstream may echo alone.
func credentialParts(v string) []string {
	if v == "" {
		return nil
	}
	if _, token, ok := strings.Cut(v, " "); ok && token != "" {
		return []string{v, token}
	}
	return []string{v}
}

// callSecrets are the secrets of one call: the server's (its configured
// credentials, Options.Secrets, AddSecrets) and, under BYOK, the values of
// the request's credential headers and their tokens, whether or not the
// handler asked for them. They are registered with the call's egress
// scope, so that the gate removes them from what the call's transport
// sends.
func (s *Server) callSecrets(c *Call) *egress.Secrets {
	sec := s.secrets.get()
	if !s.opts.BYOK || c.header == nil {
		return sec
	}
	var vals []string
	for _, cr := range s.creds {
		if v := strings.TrimSpace(c.header.Get(cr.header)); v != "" {
			vals = append(vals, credentialParts(v)...)
		}
	}
	if len(vals) == 0 {
		return sec
	}
	if c.scope != nil {
		c.scope.add(vals...)
	}
	return sec.With(vals...)
}

// scrubRecord scrubs the free-text fields of an audit record.
func scrubRecord(sec *egress.Secrets, rec *audit.Record) {
	if sec.Len() == 0 {
		return
	}
	rec.ErrorCode, _ = sec.Scrub(rec.ErrorCode)
	for k, v := range rec.Attrs {
		rec.Attrs[k], _ = sec.Scrub(v)
	}
}

// scrubText is t without the secrets of sec, for a log line.
func scrubText(sec *egress.Secrets, t string) string {
	out, _ := sec.Scrub(t)
	return out
}
