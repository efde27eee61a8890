//go:build !race

package vdb_test

// raceEnabled: see race_test.go.
const raceEnabled = false
