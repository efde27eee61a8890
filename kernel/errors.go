package kernel

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
)

// Code is a stable error code a client can act on.
type Code string

// Error codes. A tool error carries one; anything else becomes Internal.
const (
	InvalidArgument      Code = "invalid_argument"
	NotFound             Code = "not_found"
	AlreadyExists        Code = "already_exists"
	PermissionDenied     Code = "permission_denied"
	Unauthenticated      Code = "unauthenticated"
	FailedPrecondition   Code = "failed_precondition"
	Conflict             Code = "conflict"
	ConfirmationRequired Code = "confirmation_required"
	RateLimited          Code = "rate_limited"
	StoreUnavailable     Code = "store_unavailable"
	ResourceExhausted    Code = "resource_exhausted"
	UpstreamError        Code = "upstream_error"
	UpstreamUnavailable  Code = "upstream_unavailable"
	Timeout              Code = "timeout"
	Cancelled            Code = "cancelled"
	Internal             Code = "internal"
)

// Error is a tool error: the call was understood and did not succeed. Its
// Message and Hint are our own words and reach the client; Upstream is text
// the upstream wrote (an API's error message) and reaches the client only
// inside the untrusted envelope; Cause is for the log and never reaches the
// client.
type Error struct {
	Code     Code
	Message  string
	Hint     string
	Upstream string
	Cause    error
}

// Errorf returns a tool error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint sets the hint and returns e.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// WithUpstream attaches upstream text (shown enveloped) and returns e.
func (e *Error) WithUpstream(text string) *Error {
	e.Upstream = text
	return e
}

// WithCause attaches the underlying error (logged, never shown) and returns e.
func (e *Error) WithCause(err error) *Error {
	e.Cause = err
	return e
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// asToolError turns any handler error into the error the client sees. A
// *Error passes; a context error becomes Timeout or Cancelled; anything else
// becomes Internal with a fresh id, and internal reports the detail to log.
func asToolError(err error) (te *Error, internal bool) {
	if errors.As(err, &te) {
		return te, te.Code == Internal
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: Timeout, Message: "The operation timed out.", Hint: "Try again; if it keeps timing out, the upstream may be overloaded.", Cause: err}, false
	case errors.Is(err, context.Canceled):
		return &Error{Code: Cancelled, Message: "The operation was cancelled.", Cause: err}, false
	}
	return &Error{Code: Internal, Message: "An internal error occurred.", Hint: "Report the error id to the operator.", Cause: err}, true
}

// newErrorID returns a short random id that ties a client's error to a log
// line.
func newErrorID() string {
	return rand.Text()[:12]
}
