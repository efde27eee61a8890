package gateway

import "time"

// SetRelayWait shortens how long a parked upstream call waits, for tests.
func SetRelayWait(g *Gateway, d time.Duration) { g.parked.wait = d }

// Parked counts the upstream calls parked now.
func Parked(g *Gateway) int { return g.parked.len() }

// UseSDKCalls makes g relay calls to stdio upstreams through the go-sdk
// client session (the path rawcall.go replaces); call it before Start.
func UseSDKCalls(g *Gateway) { g.sdkCalls = true }

// TomlNames are the toml names of a struct type's fields.
var TomlNames = tomlNames

// SetRecheckAfter shortens how long after a listing the Pinner could not
// decide the gateway checks again, for tests; the returned func restores it.
func SetRecheckAfter(d time.Duration) func() {
	old := recheckAfter
	recheckAfter = d
	return func() { recheckAfter = old }
}
