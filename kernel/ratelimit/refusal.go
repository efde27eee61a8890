package ratelimit

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// RefusalCode is the JSON-RPC error code of a rate-limit refusal. It is the
// code the HuGR kernel uses; it lies in the spec's legacy band, which the
// 2026-07-28 revision tolerates, and outside the reserved -32020..-32099.
const RefusalCode = -32000

// RefusalData is the data member of a rate-limit refusal.
type RefusalData struct {
	// Error is always "rate_limited".
	Error string `json:"error"`
	// RetryAfterSeconds matches the Retry-After header.
	RetryAfterSeconds int `json:"retryAfterSeconds"`
}

// RetryAfterSeconds rounds d up to whole seconds, at least 1, as the
// Retry-After header needs.
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

// Refusal returns the JSON-RPC error for a refused decision: code -32000,
// data {"error":"rate_limited","retryAfterSeconds":N} and a message that
// ends "Resets in Ns.". Over HTTP it goes with status 429 and
// RetryAfterHeader(d).
func Refusal(d Decision) *Error {
	n := RetryAfterSeconds(d.RetryAfter)
	data, _ := json.Marshal(RefusalData{Error: "rate_limited", RetryAfterSeconds: n}) // cannot fail
	return &Error{
		Code:    RefusalCode,
		Message: fmt.Sprintf("Rate limit exceeded: %d calls per window. Resets in %ds.", d.Limit, n),
		Data:    data,
	}
}
