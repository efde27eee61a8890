package ratelimit

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// JSON-RPC error codes of the refusals this package shapes. They lie in the
// specification's legacy band, which the 2026-07-28 revision tolerates, and
// outside the reserved -32020..-32099; MCP defines no code for either.
const (
	// RefusalCode is a rate-limit refusal's code, the one the HuGR kernel
	// uses (HTTP 429).
	RefusalCode = -32000
	// UnavailableCode is the code of a call refused because the shared
	// store that keeps limits and confirmation tokens is unreachable (HTTP
	// 503).
	UnavailableCode = -32001
)

// Reasons carried in a refusal's data.error.
const (
	ReasonRateLimited      = "rate_limited"
	ReasonStoreUnavailable = "store_unavailable"
)

// Scope says what a limit counts.
type Scope string

// Scopes of a rate limit.
const (
	// ScopeAddress is the flood guard: HTTP requests per client address,
	// counted before authentication.
	ScopeAddress Scope = "address"
	// ScopePrincipal is the per-principal limit: tool calls per principal.
	ScopePrincipal Scope = "principal"
)

// RefusalData is the data member of every refusal this package shapes, for
// every kind and on every transport.
type RefusalData struct {
	// Error is ReasonRateLimited or ReasonStoreUnavailable.
	Error string `json:"error"`
	// Scope is what the limit counts; empty for a store outage.
	Scope Scope `json:"scope,omitempty"`
	// Limit and WindowSeconds state the limit: Limit per WindowSeconds.
	Limit         int `json:"limit,omitempty"`
	WindowSeconds int `json:"windowSeconds,omitempty"`
	// RetryAfterSeconds matches the Retry-After header of a rate-limit
	// refusal; absent for a store outage, whose end nobody knows.
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
	// Setting names the operator's setting that changes this behaviour
	// (a flag, such as "--rate-limit"), when the server was told it.
	Setting string `json:"setting,omitempty"`
	// Hint is for the operator, on a store outage.
	Hint string `json:"hint,omitempty"`
}

// RetryAfterSeconds rounds d up to whole seconds, at least 1, as the
// Retry-After header needs. It is the only rounding of a retry delay in the
// kernel: the header, data.retryAfterSeconds and the message agree.
func RetryAfterSeconds(d time.Duration) int {
	s := math.Ceil(d.Seconds())
	if s < 1 {
		return 1
	}
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(s)
}

// RetryAfterHeader returns the value of the Retry-After header for a
// refused decision.
func RetryAfterHeader(d Decision) string {
	return strconv.Itoa(RetryAfterSeconds(d.RetryAfter))
}

// Error is a JSON-RPC error object. Its fields match go-sdk's jsonrpc.Error
// exactly, so a conversion (*jsonrpc.Error)(e) is all a caller needs; the
// package does not import the SDK.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error with the message.
func (e *Error) Error() string { return e.Message }

// Refusal returns the JSON-RPC error for a refused decision, for both
// scopes: code RefusalCode, data RefusalData with error "rate_limited", and
// a message that states the limit, names the setting that changes it and
// ends "Resets in Ns.". Over HTTP it goes with status 429 and
// RetryAfterHeader(d); over stdio it is the same JSON-RPC error.
func Refusal(d Decision) *Error {
	n := RetryAfterSeconds(d.RetryAfter)
	data := RefusalData{Error: ReasonRateLimited, Scope: d.Scope, Limit: d.Limit,
		WindowSeconds: RetryAfterSeconds(d.Window), RetryAfterSeconds: n, Setting: d.Setting}
	what := "tool calls per %s for this principal"
	if d.Scope == ScopeAddress {
		what = "requests per %s from this address"
	}
	setting := ""
	if d.Setting != "" {
		setting = " (the operator's " + d.Setting + ")"
	}
	msg := fmt.Sprintf("Rate limit exceeded: %d "+what+"%s. Resets in %ds.", d.Limit, windowText(d.Window), setting, n)
	return &Error{Code: RefusalCode, Message: msg, Data: encode(data)}
}

// Unavailable returns the JSON-RPC error for a call refused because the
// shared store cannot be reached: code UnavailableCode, data.error
// "store_unavailable" and a hint for the operator. setting, when not empty,
// names the setting that lets read-only calls go on during an outage. Over
// HTTP it goes with status 503.
func Unavailable(setting string) *Error {
	data := RefusalData{Error: ReasonStoreUnavailable, Setting: setting,
		Hint: "The shared state store (Redis) does not answer; check it. Service resumes by itself once it answers."}
	msg := "The shared state store is unreachable, so this call was refused rather than run without its limits and confirmations. Try again later."
	if setting != "" {
		msg += " The operator can let read-only calls go on during an outage with " + setting + "."
	}
	return &Error{Code: UnavailableCode, Message: msg, Data: encode(data)}
}

func encode(d RefusalData) json.RawMessage {
	b, _ := json.Marshal(d) // cannot fail: strings and ints
	return b
}

// windowText says a window in words: "minute", "10 seconds", "2 minutes".
func windowText(w time.Duration) string {
	secs := RetryAfterSeconds(w)
	switch {
	case secs == 1:
		return "second"
	case secs == 60:
		return "minute"
	case secs%60 == 0:
		return fmt.Sprintf("%d minutes", secs/60)
	}
	return fmt.Sprintf("%d seconds", secs)
}
