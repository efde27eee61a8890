package dns

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// subject names what a call acted on, in the caller's own words, for error
// messages: `zone "example.com"`, `RRSet "www/A" of zone "example.com"`.
type subject struct {
	what string
	// protection is the tool that turns off the protection guarding it.
	protection string
}

func zoneSubject(zone string) subject {
	return subject{what: fmt.Sprintf("zone %q", zone), protection: "change_zone_protection"}
}

func rrsetSubject(zone, name, typ string) subject {
	return subject{what: fmt.Sprintf("RRSet %q of zone %q", name+"/"+typ, zone), protection: "change_rrset_protection"}
}

func actionSubject(id int64) subject { return subject{what: fmt.Sprintf("action %d", id)} }

// Hints of the mapped errors.
const (
	hintReadOnlyToken = "this API token is read-only; use a Read & Write token or run with HETZNER_READ_ONLY=true"
	hintRetry         = "Another action is running on the zone, or it changed during the request; retry in a few seconds (list_zone_actions shows running actions)."
	hintMode          = "RRSet tools, change_zone_ttl, import_zonefile and export_zonefile work on primary zones; change_primary_nameservers works on secondary zones. get_zone shows the mode."
)

// mapError turns a provider error into the tool error the client sees. A
// *kernel.Error passes unchanged; a *Error becomes a tool error in our own
// words, with the provider's text as enveloped upstream text; the outbound
// client's failures get their own codes; anything else is returned as is
// (the kernel reports it as internal).
func mapError(err error, sub subject) error {
	if err == nil {
		return nil
	}
	var ke *kernel.Error
	if errors.As(err, &ke) {
		return ke
	}
	var pe *Error
	if errors.As(err, &pe) {
		return providerError(pe, sub).WithCause(err)
	}
	if te := transportError(err); te != nil {
		return te.WithCause(err)
	}
	return err
}

func providerError(pe *Error, sub subject) *kernel.Error {
	up := upstreamText(pe)
	e := func(code kernel.Code, format string, args ...any) *kernel.Error {
		return kernel.Errorf(code, format, args...).WithUpstream(up)
	}
	switch pe.Code {
	case "not_found":
		return e(kernel.NotFound, "The provider found no %s.", sub.what).
			WithHint("Check the spelling; list_zones and list_rrsets show what exists.")
	case "invalid_input", "json_error":
		return e(kernel.InvalidArgument, "The provider rejected the arguments for %s as invalid.", sub.what).
			WithHint("The provider's message below names the fields; correct them and call again.")
	case "uniqueness_error":
		return e(kernel.AlreadyExists, "The %s already exists.", sub.what).
			WithHint("To change the records of an existing RRSet use add_records or set_records.")
	case "protected":
		return protectedError(sub).WithUpstream(up)
	case "locked", "conflict", "resource_locked":
		return e(kernel.Conflict, "The provider could not change %s right now.", sub.what).WithHint(hintRetry)
	case "incorrect_zone_mode":
		return e(kernel.FailedPrecondition, "This operation is not possible for %s in its mode (primary or secondary).", sub.what).WithHint(hintMode)
	case "token_readonly":
		return e(kernel.PermissionDenied, "The API token may not make changes.").WithHint(hintReadOnlyToken)
	case "unauthorized":
		return e(kernel.Unauthenticated, "The provider did not accept the API token.").
			WithHint("Check HETZNER_API_TOKEN: it must be a Hetzner Cloud API token of the project that holds the zones (tokens of the old DNS Console do not work).")
	case "forbidden":
		return e(kernel.PermissionDenied, "The provider refused access to %s.", sub.what).
			WithHint("The API token lacks the permission for this operation.")
	case "resource_limit_exceeded":
		return e(kernel.ResourceExhausted, "The provider's limit for this resource is reached.").
			WithHint("Delete something first, or ask the provider for a higher limit.")
	case "rate_limit_exceeded":
		return rateLimited(pe).WithUpstream(up)
	case "resource_unavailable":
		return e(kernel.FailedPrecondition, "The provider says %s is not available right now.", sub.what)
	}
	if ke := serverError(pe, sub, e); ke != nil {
		return ke
	}
	return statusError(pe).WithUpstream(up)
}

// serverError maps the codes of a provider that speaks DNS to an
// authoritative server (rfc2136); nil for other codes.
func serverError(pe *Error, sub subject, e func(kernel.Code, string, ...any) *kernel.Error) *kernel.Error {
	switch pe.Code {
	case "rrset_changed":
		return e(kernel.Conflict, "The %s changed on the server since it was read; nothing was changed.", sub.what).
			WithHint("Read it again (get_rrset), decide again, then call again.")
	case "update_refused":
		return e(kernel.PermissionDenied, "The DNS server refused the change to %s.", sub.what).
			WithHint("The server's update policy must let the TSIG key change this zone (BIND: allow-update { key NAME; }; Knot: an acl with action update).")
	case "transfer_refused":
		return e(kernel.PermissionDenied, "The DNS server refused the zone transfer of %s.", sub.what).
			WithHint("The server must allow zone transfers to the TSIG key (BIND: allow-transfer { key NAME; }; Knot: an acl with action transfer).")
	case "not_authoritative":
		return e(kernel.FailedPrecondition, "The DNS server is not authoritative for %s.", sub.what).
			WithHint("Check the configured zones and server: the server must be the zone's primary.")
	case "tsig_rejected":
		return e(kernel.Unauthenticated, "The DNS server did not accept the TSIG key.").
			WithHint("Check the key file: name, algorithm and secret must be the server's, and the clocks must agree within five minutes.")
	case "bad_signature":
		return e(kernel.UpstreamError, "The DNS server's answer failed the TSIG check and was dropped.").
			WithHint("A change may or may not have been applied: read the state before retrying. Check that the key is the server's.")
	case "zone_too_large":
		return e(kernel.ResourceExhausted, "The zone transfer of %s was stopped: the zone is over the zone-file budget.", sub.what).
			WithHint("bulwark reads zones of up to 200,000 records; manage a larger zone with the server's own tools.")
	case "transfer_failed":
		return e(kernel.UpstreamError, "The zone transfer of %s failed; nothing of it was used.", sub.what).
			WithHint("Retry later; if it persists, check the server's logs.")
	}
	return nil
}

func protectedError(sub subject) *kernel.Error {
	e := kernel.Errorf(kernel.FailedPrecondition, "The %s is protected against this change.", sub.what)
	if sub.protection == "" {
		return e.WithHint("Turn off the protection first.")
	}
	return e.WithHint("Turn the protection off with %s first (it asks for confirmation), then call again.", sub.protection)
}

func rateLimited(pe *Error) *kernel.Error {
	e := kernel.Errorf(kernel.RateLimited, "The provider's rate limit is exhausted; the request was not executed.")
	if pe.RetryAfter > 0 {
		secs := int(math.Ceil(pe.RetryAfter.Seconds()))
		return e.WithHint("Retry after %d seconds.", secs)
	}
	return e.WithHint("Retry in a minute.")
}

// statusError maps the codes without a rule of their own by HTTP status.
func statusError(pe *Error) *kernel.Error {
	switch {
	case pe.Code == "unavailable" || pe.Code == "timeout" || pe.Code == "maintenance" ||
		pe.Status == 503 || pe.Status == 504:
		return kernel.Errorf(kernel.UpstreamUnavailable, "The provider is unavailable right now.").
			WithHint("Retry later. A change that timed out may or may not have been applied: read the state before retrying it.")
	case pe.Status >= 500 || pe.Code == "upstream_error":
		return kernel.Errorf(kernel.UpstreamError, "The provider failed to answer the request.").
			WithHint("Retry later. A change may or may not have been applied: read the state before retrying it.")
	}
	return kernel.Errorf(kernel.UpstreamError, "The provider refused the request.")
}

// upstreamText is the provider's own account of an error: its code, its
// message and, for invalid input, the fields. All of it is upstream text.
func upstreamText(pe *Error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", pe.Code, pe.Message)
	for _, f := range pe.Fields {
		fmt.Fprintf(&b, "\n- %s", f.Name)
		if len(f.Messages) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(f.Messages, "; "))
		}
	}
	return b.String()
}

// transportError maps the outbound client's failures; nil for others.
func transportError(err error) *kernel.Error {
	switch {
	case errors.Is(err, upstream.ErrTimeout):
		return kernel.Errorf(kernel.Timeout, "The provider did not answer in time.").
			WithHint("Retry later. A change that timed out may or may not have been applied: read the state before retrying it.")
	case errors.Is(err, upstream.ErrRedirect):
		return kernel.Errorf(kernel.UpstreamError, "The provider answered with a redirect, which is refused: the API token is never sent to another address.").
			WithHint("Check the API base URL the server is configured with.")
	case errors.Is(err, upstream.ErrResponseTooLarge):
		return kernel.Errorf(kernel.UpstreamError, "The provider's answer was too large and was dropped.").
			WithHint("List fewer items per page.")
	case errors.Is(err, upstream.ErrTransport):
		return kernel.Errorf(kernel.UpstreamUnavailable, "The provider could not be reached.").
			WithHint("Retry later; if it persists, check the network and the API base URL.")
	}
	return nil
}
