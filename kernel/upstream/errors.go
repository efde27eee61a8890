package upstream

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them and never
// contain request headers, credentials or URL queries.
var (
	// ErrBaseURL reports a base URL that ValidateBaseURL refuses.
	ErrBaseURL = errors.New("upstream: invalid base url")
	// ErrTimeout reports an attempt that exceeded the client's timeout.
	ErrTimeout = errors.New("upstream: request timed out")
	// ErrRedirect reports a redirect answer; redirects are never followed.
	ErrRedirect = errors.New("upstream: redirect refused")
	// ErrResponseTooLarge reports a success body above the configured cap.
	ErrResponseTooLarge = errors.New("upstream: response body too large")
	// ErrTransport reports a network or protocol failure below HTTP.
	ErrTransport = errors.New("upstream: transport failure")
	// ErrRequest reports a request the client cannot send (bad method, no URL).
	ErrRequest = errors.New("upstream: invalid request")
	// ErrMalformedResponse reports a 2xx answer that is not in the form the
	// upstream's API documents. Clients wrap it when they cannot decode a
	// success body; the kernel reports it as upstream_error, not internal:
	// the upstream is broken or hostile, our own infrastructure is not.
	ErrMalformedResponse = errors.New("upstream: malformed response")
)
