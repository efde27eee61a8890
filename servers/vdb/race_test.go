//go:build race

package vdb_test

// raceEnabled: the race detector multiplies memory and time, so the
// memory bound is not measured under it.
const raceEnabled = true
