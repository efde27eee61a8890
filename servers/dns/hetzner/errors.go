package hetzner

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// CodeUpstreamError is the code of an error answer that is not the API's
// JSON error (a proxy's HTML page, plain text, garbage).
const CodeUpstreamError = "upstream_error"

// Bounds on an invalid_input answer's details.
const (
	maxFields        = 32
	maxFieldMessages = 8
	maxFieldNameLen  = 128
)

// redacted replaces the token wherever upstream text echoes it.
const redacted = "[redacted]"

// wireError is the API's error answer (reference §2.1).
type wireError struct {
	Error *struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

type wireDetails struct {
	Fields []struct {
		Name     string   `json:"name"`
		Messages []string `json:"messages"`
	} `json:"fields"`
}

// apiError maps a non-2xx answer to a *dns.Error. The token is scrubbed
// from upstream text before it is sanitized and cut, so not even a prefix of
// it survives a cut.
func (c *Client) apiError(resp *upstream.Response, token string) *dns.Error {
	clean := func(s string) string { return upstream.SanitizeErrorMessage(scrub(s, token)) }
	e := &dns.Error{Status: resp.StatusCode}
	var w wireError
	if err := json.Unmarshal(resp.Body, &w); err == nil && w.Error != nil && validCode(w.Error.Code) {
		e.Code = w.Error.Code
		e.Message = clean(w.Error.Message)
		e.Fields = fieldErrors(w.Error.Details, clean)
	} else {
		body := []byte(scrub(string(resp.Body), token))
		e.Code = CodeUpstreamError
		e.Message = upstream.SanitizeErrorBody(resp.Header.Get("Content-Type"), body)
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		e.Code = "rate_limit_exceeded"
		if d, ok := upstream.RetryAfter(resp.Header, c.now()); ok {
			e.RetryAfter = d
		}
	}
	return e
}

// validCode accepts the API's code alphabet: [a-z][a-z0-9_]*, at most 64.
func validCode(code string) bool {
	if code == "" || len(code) > 64 || code[0] < 'a' || code[0] > 'z' {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// fieldErrors takes details.fields (invalid_input, uniqueness_error),
// bounded and sanitized; other details shapes are dropped.
func fieldErrors(raw json.RawMessage, clean func(string) string) []dns.FieldError {
	var d wireDetails
	if len(raw) == 0 || json.Unmarshal(raw, &d) != nil {
		return nil
	}
	var out []dns.FieldError
	for _, f := range d.Fields[:min(len(d.Fields), maxFields)] {
		fe := dns.FieldError{Name: cut(clean(f.Name), maxFieldNameLen)}
		for _, m := range f.Messages[:min(len(f.Messages), maxFieldMessages)] {
			fe.Messages = append(fe.Messages, clean(m))
		}
		out = append(out, fe)
	}
	return out
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// scrub replaces every occurrence of the token in s.
func scrub(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, redacted)
}
