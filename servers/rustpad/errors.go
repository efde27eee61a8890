package rustpad

import (
	"context"
	"errors"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/session"
)

// Hints of the mapped errors.
const (
	hintReread  = "Read the pad with get_document before trying again; never repeat an append or a replacement blindly."
	hintRetry   = "Retry later; if it keeps failing, check RUSTPAD_URL and the network."
	hintHostile = "The Rustpad server (or something in front of it) sent what a Rustpad server never sends. " +
		"Check RUSTPAD_URL; the pad was not changed by this call."
)

// sessionError turns a session error into the tool error the client sees,
// in our own words: the session's error text (which may quote frames) goes
// to the log as the cause only. A *kernel.Error and the caller's own
// context errors pass unchanged.
func (s *Server) sessionError(err error, id string) error {
	var ke *kernel.Error
	if errors.As(err, &ke) {
		return ke
	}
	if errors.Is(err, session.ErrOutcomeUnknown) {
		return kernel.Errorf(kernel.Conflict, "The change to pad %q was sent, but Rustpad did not acknowledge it in time or the connection ended: "+
			"it may or may not have been applied.", id).WithHint(hintReread).WithCause(err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if e := sessionKind(err, id, s.maxDoc); e != nil {
		return e.WithCause(err)
	}
	return err // our own bug (a revision we did not observe, an op that does not fit): internal
}

func sessionKind(err error, id string, maxDoc int) *kernel.Error {
	switch {
	case errors.Is(err, session.ErrInvalidPadID):
		return invalid("id", "a pad id is 1-%d characters of A-Z a-z 0-9 . _ - and not . or ..", maxIDLen)
	case errors.Is(err, session.ErrDeadline):
		return kernel.Errorf(kernel.Timeout, "Rustpad did not answer in time on pad %q.", id).WithHint(hintRetry)
	case errors.Is(err, session.ErrDocumentTooLarge):
		return kernel.Errorf(kernel.ResourceExhausted, "Pad %q is or would become larger than this server's document limit of %d characters.", id, maxDoc).
			WithHint("Rustpad caps a pad at 262,144 characters; write less, or remove text first.")
	case errors.Is(err, session.ErrMalformedHistory), errors.Is(err, session.ErrProtocol):
		return kernel.Errorf(kernel.UpstreamError, "Rustpad sent a malformed message for pad %q.", id).WithHint(hintHostile)
	case errors.Is(err, session.ErrQueueOverflow), errors.Is(err, session.ErrFrameTooLarge):
		return kernel.Errorf(kernel.UpstreamError, "Rustpad sent more data for pad %q than this server accepts.", id).WithHint(hintHostile)
	case errors.Is(err, session.ErrDial):
		return kernel.Errorf(kernel.UpstreamUnavailable, "Could not connect to Rustpad for pad %q.", id).WithHint(hintRetry)
	case errors.Is(err, session.ErrClosed):
		return kernel.Errorf(kernel.UpstreamUnavailable, "Rustpad closed the connection for pad %q.", id).WithHint(hintRetry)
	case errors.Is(err, ot.ErrInvalidText):
		return kernel.Errorf(kernel.InvalidArgument, "The text is not valid UTF-8.")
	}
	return nil
}

// transportError maps the /api client's failures; nil for others.
func transportError(err error) *kernel.Error {
	switch {
	case errors.Is(err, upstream.ErrTimeout):
		return kernel.Errorf(kernel.Timeout, "Rustpad did not answer in time.").WithHint(hintRetry)
	case errors.Is(err, upstream.ErrRedirect):
		return kernel.Errorf(kernel.UpstreamError, "Rustpad answered with a redirect, which is refused.").
			WithHint("Set RUSTPAD_URL to the address the instance really serves (scheme, host and prefix).")
	case errors.Is(err, upstream.ErrResponseTooLarge):
		return kernel.Errorf(kernel.UpstreamError, "Rustpad's answer was larger than any pad can be and was dropped.").WithHint(hintHostile)
	case errors.Is(err, upstream.ErrTransport):
		return kernel.Errorf(kernel.UpstreamUnavailable, "Rustpad could not be reached.").WithHint(hintRetry)
	}
	return nil
}
