package localzone

import (
	"fmt"
	"net/http"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// Error codes this package reports besides the API's own.
const (
	// CodeInvalidZonefile: a zone file on disk no longer parses. The message
	// names the line; the file is left as it is until someone fixes it.
	CodeInvalidZonefile = "invalid_zonefile"
)

// maxMessage bounds the length of every error message, which may quote a
// zone file's text.
const maxMessage = 300

// bound cuts s to maxMessage bytes on a rune boundary.
func bound(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:untrusted.CutIndex(s, maxMessage)] + "…"
}

func errNotFound(format string, args ...any) *dns.Error {
	return &dns.Error{Status: http.StatusNotFound, Code: "not_found", Message: bound(fmt.Sprintf(format, args...))}
}

// errInvalid is a 422 invalid_input naming one invalid field.
func errInvalid(field, format string, args ...any) *dns.Error {
	msg := bound(fmt.Sprintf(format, args...))
	return &dns.Error{
		Status:  http.StatusUnprocessableEntity,
		Code:    "invalid_input",
		Message: bound(fmt.Sprintf("invalid input in field '%s': %s", field, msg)),
		Fields:  []dns.FieldError{{Name: field, Messages: []string{msg}}},
	}
}

func errUnique(field, format string, args ...any) *dns.Error {
	return &dns.Error{
		Status:  http.StatusConflict,
		Code:    "uniqueness_error",
		Message: bound(fmt.Sprintf(format, args...)),
		Fields:  []dns.FieldError{{Name: field}},
	}
}

func errProtected(format string, args ...any) *dns.Error {
	return &dns.Error{Status: http.StatusLocked, Code: "protected", Message: bound(fmt.Sprintf(format, args...))}
}

func errConflict(format string, args ...any) *dns.Error {
	return &dns.Error{Status: http.StatusConflict, Code: "conflict", Message: bound(fmt.Sprintf(format, args...))}
}

func errZoneMode(format string, args ...any) *dns.Error {
	return &dns.Error{Status: http.StatusUnprocessableEntity, Code: "incorrect_zone_mode", Message: bound(fmt.Sprintf(format, args...))}
}

func errZonefile(zone string, err error) *dns.Error {
	return &dns.Error{
		Status:  http.StatusUnprocessableEntity,
		Code:    CodeInvalidZonefile,
		Message: bound(fmt.Sprintf("zone file of %s does not parse; fix or remove it by hand: %v", zone, err)),
	}
}
