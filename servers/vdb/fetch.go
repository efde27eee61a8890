package vdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// fetched is one upstream answer, as the tools see it.
type fetched struct {
	body   []byte
	header http.Header
	cached bool
}

// apiPath builds /v2/<segments>, each segment path-escaped (as the CLI
// does). It returns the unescaped and the escaped forms.
func apiPath(segments ...string) (string, string) {
	var p, raw strings.Builder
	for _, s := range segments {
		p.WriteString("/" + s)
		raw.WriteString("/" + url.PathEscape(s))
	}
	return p.String(), raw.String()
}

// apiURL is the URL of /v2/<segs>?<q> on the API.
func (s *Server) apiURL(segs []string, q url.Values) *url.URL {
	path, raw := apiPath(segs...)
	u := *s.api
	u.Path = s.api.Path + "/v2" + path
	u.RawPath = s.api.EscapedPath() + "/v2" + raw
	u.RawQuery = q.Encode()
	return &u
}

// get sends one credentialed GET to the API (/v2/<segs>), through the
// per-principal cache. The URL is checked against the route rule
// (checkAPIURL) before the credential is even looked up, so a refused
// route answers invalid_argument whoever calls; the outbound client checks
// it once more as the last step before sending.
func (s *Server) get(ctx context.Context, call *kernel.Call, segs []string, q url.Values) (*fetched, error) {
	u := s.apiURL(segs, q)
	if len(segs) == 0 || s.checkAPIURL(u) != nil {
		return nil, errRoute()
	}
	cred, err := s.credentialFor(call)
	if err != nil {
		return nil, err
	}
	call.SetAuditAttr(attrScheme, cred.scheme)
	key := cacheKey(call.Principal.ID, cred.cacheID, u.EscapedPath()+"?"+u.RawQuery)
	if f, ok := s.cache.get(key); ok {
		call.CacheHit()
		notePlan(call, f.header.Get("X-VDB-Plan"))
		return f, nil
	}
	resp, err := s.http.Do(ctx, &upstream.Request{URL: u, Header: http.Header{
		"Authorization": {cred.header}, "Accept": {"application/json"}}})
	if err != nil {
		return nil, apiOrigin.transportError(err)
	}
	notePlan(call, resp.Header.Get("X-VDB-Plan"))
	if !resp.OK() {
		return nil, s.statusError(call, resp, cred)
	}
	if !isJSON(resp.Header.Get("Content-Type")) {
		return nil, kernel.Errorf(kernel.UpstreamError, "The VDB API answered with %s, not JSON.", safeType(resp.Header.Get("Content-Type")))
	}
	// The egress gate removes an echoed credential from what the client
	// receives (credentialFor registered every part of it); the answer is
	// scrubbed of it here too, in every decoding, so that the cache (keyed
	// by principal and credential besides) never keeps it.
	body, _, err := call.ScrubJSON(resp.Body)
	if err != nil {
		return nil, kernel.Errorf(kernel.UpstreamError, "The VDB API answered with a body that is not JSON.")
	}
	if _, err := decoded(ctx, body, checkBudget); err != nil {
		return nil, err // never cached: what the cache holds decodes within the budget
	}
	f := &fetched{body: body, header: resp.Header}
	s.cache.put(key, f, resp.Header)
	return f, nil
}

// getJSON is get, then the answer decoded.
func (s *Server) getJSON(ctx context.Context, call *kernel.Call, segs []string, q url.Values) (*fetched, any, error) {
	f, err := s.get(ctx, call, segs, q)
	if err != nil {
		return nil, nil, err
	}
	v, err := decoded(ctx, f.body, decode)
	return f, v, err
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// knownTypes are the content types safeType names; a media type is
// upstream-written text (a subtype can carry anything, a credential's
// digest among it), so no other is ever quoted.
var knownTypes = []string{"text/html", "text/plain", "text/xml", "application/xml", "application/octet-stream",
	"application/x-www-form-urlencoded", "multipart/form-data", "application/problem+xml"}

// safeType names a content type without echoing upstream text: one of
// knownTypes, or "another content type".
func safeType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err != nil:
		return "an unreadable content type"
	case slices.Contains(knownTypes, mt):
		return strconv.Quote(mt)
	}
	return "another content type"
}

// errRoute is the refusal of a request whose URL the route rule refuses.
func errRoute() *kernel.Error {
	return kernel.Errorf(kernel.InvalidArgument, "This route is never reachable: CLI-only, credential, upload and binary routes, and paths that leave the read prefixes once decoded, are refused.").
		WithHint("Give plain names and identifiers, without path syntax or encodings.")
}

// origin is one upstream as errors name it: the VDB API or the sign-in
// site, each with the most of one answer this server holds.
type origin struct {
	name  string // "The VDB API", as a sentence starts
	limit int64
	hint  string // what to do about an answer over limit
}

var (
	apiOrigin = origin{name: "The VDB API", limit: MaxBufferedBytes,
		hint: "Ask for less: detail \"summary\", a narrower filter or a smaller limit."}
	siteOrigin = origin{name: "The Vulnetix sign-in site", limit: maxSiteBody,
		hint: "The sign-in site's answers are small; this one is not what the site sends. Try again later."}
)

// transportError maps the upstream client's failures to tool errors that
// name the upstream that failed.
func (o origin) transportError(err error) error {
	switch {
	case errors.Is(err, upstream.ErrURLRefused):
		return errRoute().WithCause(err)
	case errors.Is(err, upstream.ErrResponseTooLarge):
		return kernel.Errorf(kernel.ResourceExhausted, "%s answered with more than %d bytes, the most this server holds in memory; it was not passed on.", o.name, o.limit).
			WithHint("%s", o.hint).WithCause(err)
	case errors.Is(err, upstream.ErrTimeout):
		return kernel.Errorf(kernel.Timeout, "%s did not answer in time.", o.name).WithCause(err)
	case errors.Is(err, upstream.ErrRedirect):
		return kernel.Errorf(kernel.UpstreamError, "%s answered with a redirect, which this server never follows.", o.name).WithCause(err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return kernel.Errorf(kernel.Cancelled, "The call was cancelled.").WithCause(err)
	}
	return kernel.Errorf(kernel.UpstreamUnavailable, "%s could not be reached.", o.name).WithCause(err)
}

// upstreamMessage is the "error" of a VDB error body, or "".
func upstreamMessage(resp *upstream.Response) string {
	if !isJSON(resp.Header.Get("Content-Type")) {
		return ""
	}
	var b struct {
		Error   string `json:"error"`
		Details string `json:"details"`
	}
	if json.Unmarshal(resp.Body, &b) != nil || b.Error == "" {
		return ""
	}
	msg := b.Error
	if b.Details != "" {
		msg += ": " + b.Details
	}
	return upstream.SanitizeErrorMessage(msg)
}

// statusError maps a non-2xx answer to a tool error. The upstream's own
// message travels only inside the envelope (WithUpstream); headers never do.
func (s *Server) statusError(call *kernel.Call, resp *upstream.Response, cred credential) error {
	msg := upstreamMessage(resp)
	var e *kernel.Error
	switch st := resp.StatusCode; {
	case st == http.StatusUnauthorized:
		e = kernel.Errorf(kernel.Unauthenticated, "The VDB API refused the credential (missing, malformed, invalid or expired).")
		if cred.stored {
			e = e.WithHint("Sign in again with vdb_auth_start, or sign out with vdb_auth_logout.")
		} else {
			e = e.WithHint("%s", s.signInHint())
		}
	case st == http.StatusForbidden:
		e = kernel.Errorf(kernel.PermissionDenied, "The VDB API refused access: the organisation is inactive or blocked, or the plan does not include this.")
	case st == http.StatusNotFound:
		e = kernel.Errorf(kernel.NotFound, "The VDB has no such record.")
	case st == http.StatusTooManyRequests:
		e = s.rateLimited(resp.Header)
	case st == http.StatusBadRequest:
		e = kernel.Errorf(kernel.InvalidArgument, "The VDB API refused the request as invalid.")
	case st >= 500:
		e = kernel.Errorf(kernel.UpstreamUnavailable, "The VDB API failed (HTTP %d).", st)
	default:
		e = kernel.Errorf(kernel.UpstreamError, "The VDB API answered HTTP %d.", st)
	}
	if msg != "" {
		e = e.WithUpstream(msg)
	}
	return e
}

// maxReset is the furthest reset a rate-limit error reports; one at or
// beyond it is reported as unknown (upstream.RetryAfter caps a delta at a
// day, so a day means "a day or more").
const maxReset = 24 * time.Hour

// rateLimited reports the limit and its reset from the headers. The server
// never retries with another credential.
func (s *Server) rateLimited(h http.Header) *kernel.Error {
	var b strings.Builder
	b.WriteString("The Vulnetix rate limit or quota for this credential is used up")
	if lim := headerNumber(h, "RateLimit-DayLimit"); lim != "" {
		fmt.Fprintf(&b, " (daily limit %s", lim)
		if rem := headerNumber(h, "RateLimit-Remaining"); rem != "" {
			fmt.Fprintf(&b, ", remaining %s", rem)
		}
		b.WriteString(")")
	}
	b.WriteString(".")
	e := kernel.Errorf(kernel.RateLimited, "%s", b.String())
	switch d, ok := upstream.RetryAfter(h, s.now()); {
	case ok && d < maxReset:
		reset := s.now().Add(d).UTC().Truncate(time.Second)
		e.Message += fmt.Sprintf(" It resets in %d seconds (%s).", int(d.Round(time.Second).Seconds()), reset.Format(time.RFC3339))
	case ok:
		// A daily quota resets within a day; anything further is a value
		// that cannot be right (a RateLimit-Reset of 9223372036854775807
		// read as 9223372036 seconds), not a time to repeat.
		e.Message += " When it resets is unknown."
	}
	return e.WithHint("Wait for the reset; this server never switches to another credential.")
}

// headerNumber is a header that is a number or "unlimited", else "".
func headerNumber(h http.Header, name string) string {
	v := strings.TrimSpace(h.Get(name))
	if v == "unlimited" {
		return v
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return strconv.FormatInt(n, 10)
	}
	return ""
}
