package identity

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/internal/errorid"
	"github.com/bulwarkmcp/bulwark/kernel/internal/reqscope"
)

// Middleware authenticates each request with auth. On success it stores the
// Principal in the request context (see FromContext) and removes the
// Authorization and X-API-Key headers, under any casing of their keys, from
// the request passed on (for every scheme, None included), so that no later
// stage can forward or log the client's token: upstream calls carry their
// own credentials (the one exception is the kernel's forwarding of an answer
// to the replica of the same service that holds its call, which takes them
// from the request as sent: kernel/stateroute.go). The header map is copied only when there is one to
// remove; the caller's request keeps its own. On refusal it answers with the status and challenge of
// the *authError and a short JSON body
//
//	{"error":"invalid_token","message":"The access token is invalid or expired.","id":"3f9a1c2b7d4e6a01"}
//
// and logs the detail to logger under the same id. Errors that are not an
// *authError are answered 500. A nil logger discards.
func Middleware(auth Authenticator, logger *slog.Logger) func(http.Handler) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, err := auth.Authenticate(r)
			if err != nil {
				writeRefusal(w, r, err, logger)
				return
			}
			// The principal goes into the request's reqscope.Scope (the one
			// context value the kernel's layers share), without copying
			// the request when the guards made one already.
			r, sc := reqscope.Ensure(r)
			sc.Principal = p
			if hasCredentialHeader(r.Header) { // copies, so the caller's request keeps it
				r = r.WithContext(r.Context())
				r.Header = withoutCredentialHeaders(r.Header)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// isCredentialHeader reports whether a header key names Authorization or
// X-API-Key in any casing: a key set into the map directly (not through
// Header.Set) keeps the casing it was given, and Header.Del would miss it.
func isCredentialHeader(k string) bool {
	return strings.EqualFold(k, headerAuthorization) || strings.EqualFold(k, headerAPIKey)
}

func hasCredentialHeader(h http.Header) bool {
	for k := range h {
		if isCredentialHeader(k) {
			return true
		}
	}
	return false
}

// withoutCredentialHeaders is a copy of h without the credential headers.
func withoutCredentialHeaders(h http.Header) http.Header {
	out := h.Clone()
	for k := range out {
		if isCredentialHeader(k) {
			delete(out, k)
		}
	}
	return out
}

type refusalBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	ID      string `json:"id"`
}

// writeRefusal answers an authentication failure. The body says only the
// kind of failure; the detail is logged with an id the client also sees.
func writeRefusal(w http.ResponseWriter, r *http.Request, err error, logger *slog.Logger) {
	id := errorid.New()
	var ae *authError
	if !errors.As(err, &ae) {
		ae = &authError{Status: http.StatusInternalServerError, Kind: errors.New("internal error"), Detail: err}
	}
	body := refusalBody{Error: ae.code(), Message: ae.message(), ID: id}
	if ae.Status == http.StatusInternalServerError {
		body.Error, body.Message = "server_error", "Internal error."
	}
	logRefusal(r, logger, ae, id)
	h := w.Header()
	if ae.Challenge != "" {
		h.Set("WWW-Authenticate", ae.Challenge)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(ae.Status)
	json.NewEncoder(w).Encode(body)
}

func logRefusal(r *http.Request, logger *slog.Logger, ae *authError, id string) {
	level := slog.LevelWarn
	switch {
	case ae.Status >= 500:
		level = slog.LevelError
	case errors.Is(ae.Kind, errNoCredentials):
		level = slog.LevelInfo
	}
	detail := ""
	if ae.Detail != nil {
		detail = ae.Detail.Error()
	}
	logger.LogAttrs(r.Context(), level, "authentication refused",
		slog.String("id", id),
		slog.Int("status", ae.Status),
		slog.String("kind", ae.Kind.Error()),
		slog.String("detail", detail),
		slog.String("remote", r.RemoteAddr),
	)
}
