package gateway

import (
	"encoding/json"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
)

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

// Subscriptions counts the client sessions' subscriptions the gateway
// holds, over every upstream.
func Subscriptions(g *Gateway) int {
	n := 0
	for _, l := range g.links {
		l.mu.Lock()
		for _, ss := range l.subs {
			n += len(ss)
		}
		l.mu.Unlock()
	}
	return n
}

// SealParkedRecord is the value of a parked call's record whose key ends in
// digest, naming advertise, as g's sharing seals it (for tests that forge
// or move records).
func SealParkedRecord(g *Gateway, digest, advertise string) (string, error) {
	return g.replicas.Load().Sealer.SealFor(purposeParkedRecord, digest, []byte(advertise), time.Minute)
}

// SealTaskRecord is the value of a task's record in the hash key, field
// field, naming holder and the task id, as g's sharing seals it (for tests
// that forge or move records).
func SealTaskRecord(g *Gateway, key, field, holder, id string) (string, error) {
	raw, err := json.Marshal(taskRecordValue{Holder: holder, Task: kernel.Task{TaskID: id, Status: kernel.TaskWorking}})
	if err != nil {
		return "", err
	}
	return g.replicas.Load().Sealer.SealFor(purposeTaskRecord, key+"/"+field, raw, time.Minute)
}
