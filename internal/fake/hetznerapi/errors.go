package hetznerapi

import (
	"encoding/json"
	"net/http"
)

// Error codes of the Hetzner Cloud API used by the fake (reference §2.1).
const (
	CodeJSONError           = "json_error"
	CodeUnauthorized        = "unauthorized"
	CodeTokenReadonly       = "token_readonly"
	CodeForbidden           = "forbidden"
	CodeNotFound            = "not_found"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeUniquenessError     = "uniqueness_error"
	CodeConflict            = "conflict"
	CodeInvalidInput        = "invalid_input"
	CodeIncorrectZoneMode   = "incorrect_zone_mode"
	CodeLocked              = "locked"
	CodeProtected           = "protected"
	CodeRateLimitExceeded   = "rate_limit_exceeded"
	CodeServerError         = "server_error"
	CodeUnavailable         = "unavailable"
	CodeTimeout             = "timeout"
	CodeMaintenance         = "maintenance"
	CodeResourceUnavailable = "resource_unavailable"
)

// statusOf maps the documented codes to their HTTP status (reference §2.1).
var statusOf = map[string]int{
	CodeJSONError:           http.StatusBadRequest,
	CodeUnauthorized:        http.StatusUnauthorized,
	CodeTokenReadonly:       http.StatusUnauthorized,
	CodeForbidden:           http.StatusForbidden,
	CodeMaintenance:         http.StatusForbidden,
	CodeNotFound:            http.StatusNotFound,
	CodeMethodNotAllowed:    http.StatusMethodNotAllowed,
	CodeUniquenessError:     http.StatusConflict,
	CodeConflict:            http.StatusConflict,
	CodeResourceUnavailable: http.StatusPreconditionFailed,
	CodeInvalidInput:        http.StatusUnprocessableEntity,
	CodeIncorrectZoneMode:   http.StatusUnprocessableEntity,
	CodeLocked:              http.StatusLocked,
	CodeProtected:           http.StatusLocked,
	CodeRateLimitExceeded:   http.StatusTooManyRequests,
	CodeServerError:         http.StatusInternalServerError,
	CodeUnavailable:         http.StatusServiceUnavailable,
	CodeTimeout:             http.StatusGatewayTimeout,
}

// StatusForCode returns the HTTP status the API uses for an error code, or
// 500 for a code the reference does not list.
func StatusForCode(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// apiError is an error answer in the documented shape
// {"error":{"code","message","details"}}.
type apiError struct {
	status  int
	code    string
	message string
	details any
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// FieldError names one invalid field of an invalid_input answer.
type FieldError struct {
	Name     string   `json:"name"`
	Messages []string `json:"messages,omitempty"`
}

type fieldsDetails struct {
	Fields []FieldError `json:"fields"`
}

func newError(code, message string) *apiError {
	return &apiError{status: StatusForCode(code), code: code, message: message}
}

// invalidField builds a 422 invalid_input with details.fields.
func invalidField(field, msg string) *apiError {
	e := newError(CodeInvalidInput, "invalid input in field '"+field+"'")
	e.details = fieldsDetails{Fields: []FieldError{{Name: field, Messages: []string{msg}}}}
	return e
}

// notUnique builds a 409 uniqueness_error naming the clashing field.
func notUnique(field, msg string) *apiError {
	e := newError(CodeUniquenessError, msg)
	e.details = fieldsDetails{Fields: []FieldError{{Name: field}}}
	return e
}

func notFound(what string) *apiError {
	return newError(CodeNotFound, what+" not found")
}

func wrongMode(mode string) *apiError {
	return newError(CodeIncorrectZoneMode, "operation not supported for zones in mode "+mode)
}

// errorBody is the wire shape of an error answer.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details any    `json:"details"`
	} `json:"error"`
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	var b errorBody
	b.Error.Code, b.Error.Message, b.Error.Details = e.code, e.message, e.details
	writeJSON(w, e.status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
