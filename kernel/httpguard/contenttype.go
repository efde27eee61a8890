package httpguard

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// ContentType requires a JSON body sent as is: Content-Type
// application/json (parameters allowed; a charset must be utf-8), no
// Content-Encoding other than identity (the body limit counts bytes as
// received, so encoded bodies are refused rather than inflated), and an
// Accept that lists application/json and text/event-stream as the
// Streamable HTTP transport requires (with the go-sdk's wildcard rules).
// The zero value checks all three.
type ContentType struct {
	// DisableAcceptCheck skips the Accept rule, for servers in front of
	// which an older client omits it.
	DisableAcceptCheck bool
}

// Check returns errUnsupportedMediaType, errUnsupportedEncoding or
// errNotAcceptable.
func (c ContentType) Check(r *http.Request) error {
	if err := checkMediaType(r.Header.Values("Content-Type")); err != nil {
		return err
	}
	if err := checkEncoding(r.Header.Values("Content-Encoding")); err != nil {
		return err
	}
	if !c.DisableAcceptCheck && !acceptsStreamable(r.Header.Values("Accept")) {
		return errNotAcceptable
	}
	return nil
}

// checkMediaType accepts exactly one Content-Type whose media type is
// application/json (case-insensitive) and whose charset, if any, is utf-8.
func checkMediaType(values []string) error {
	if len(values) != 1 {
		return fmt.Errorf("%d Content-Type headers: %w", len(values), errUnsupportedMediaType)
	}
	if values[0] == "application/json" { // the common case, without a parse
		return nil
	}
	mt, params, err := mime.ParseMediaType(values[0])
	if err != nil || mt != "application/json" {
		return errUnsupportedMediaType
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return fmt.Errorf("charset must be utf-8: %w", errUnsupportedMediaType)
	}
	return nil
}

// checkEncoding accepts no Content-Encoding or only "identity" codings.
func checkEncoding(values []string) error {
	for _, v := range values {
		for rest, more := v, true; more; {
			var coding string
			coding, rest, more = strings.Cut(rest, ",")
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				return errUnsupportedEncoding
			}
		}
	}
	return nil
}

// acceptsStreamable mirrors the go-sdk's rule (mcp/streamable.go
// streamableAccepts) so both layers agree on which requests pass.
func acceptsStreamable(values []string) bool {
	jsonOK, streamOK := false, false
	for _, v := range values {
		for rest, more := v, true; more; {
			var raw string
			raw, rest, more = strings.Cut(rest, ",")
			base, _, _ := strings.Cut(raw, ";")
			base = strings.TrimSpace(base)
			switch {
			case strings.EqualFold(base, "application/json"), strings.EqualFold(base, "application/*"):
				jsonOK = true
			case strings.EqualFold(base, "text/event-stream"), strings.EqualFold(base, "text/*"):
				streamOK = true
			case base == "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// Handler answers 415 (media type, encoding) or 406 (Accept) when Check
// fails, else calls next.
func (c ContentType) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.Check(r); err != nil {
			writeCheckError(w, nil, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
