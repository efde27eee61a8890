package hetzner

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

var (
	zoneRE  = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	rrsetRE = regexp.MustCompile(`^[A-Za-z0-9@*._-]+$`)
)

// FuzzValidSegment checks validSegment against the reference pattern
// ^(?!\.\.?$)[A-Za-z0-9._-]+$ (and the RRSet variant with @ and *).
func FuzzValidSegment(f *testing.F) {
	for _, s := range []string{"example.com", "4711", "@", "*", "*.sub", ".", "..", "...", "a/b", "%40", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		notDots := s != "." && s != ".."
		short := len(s) <= maxSegmentLen
		if got, want := validSegment(s, false), notDots && short && zoneRE.MatchString(s); got != want {
			t.Fatalf("zone %q: %v, want %v", s, got, want)
		}
		if got, want := validSegment(s, true), notDots && short && rrsetRE.MatchString(s); got != want {
			t.Fatalf("rrset name %q: %v, want %v", s, got, want)
		}
	})
}

// FuzzAPIError checks that any error answer maps to a bounded, token-free,
// HTML-free *dns.Error with a well-formed code.
func FuzzAPIError(f *testing.F) {
	f.Add(422, "application/json", `{"error":{"code":"invalid_input","message":"bad","details":{"fields":[{"name":"ttl","messages":["x"]}]}}}`)
	f.Add(502, "text/html", "<html>bad gateway</html>")
	f.Add(429, "", `{"error":{"code":"rate_limit_exceeded","message":"TOKEN"}}`)
	f.Add(500, "text/plain", "TOKEN at the end")
	f.Fuzz(func(t *testing.T, status int, ctype, body string) {
		c := &Client{now: func() time.Time { return time.Unix(1_760_000_000, 0) }}
		body = strings.ReplaceAll(body, "TOKEN", testToken)
		h := http.Header{}
		h.Set("Content-Type", ctype)
		e := c.apiError(&upstream.Response{StatusCode: status, Header: h, Body: []byte(body)}, testToken)
		if !validCode(e.Code) {
			t.Fatalf("code %q", e.Code)
		}
		texts := []string{e.Message}
		for _, fe := range e.Fields {
			texts = append(texts, fe.Name)
			texts = append(texts, fe.Messages...)
		}
		for _, s := range texts {
			if strings.Contains(s, testToken) {
				t.Fatalf("token in %q", s)
			}
			if utf8.RuneCountInString(s) > upstream.MaxErrorTextRunes {
				t.Fatalf("text of %d runes", utf8.RuneCountInString(s))
			}
			if s != upstream.HTMLDropped && strings.HasPrefix(s, "<") {
				t.Fatalf("markup kept: %.60q", s)
			}
		}
		if len(e.Fields) > maxFields {
			t.Fatalf("%d fields", len(e.Fields))
		}
	})
}
