// Package memory is the garbage collector's setting for a bulwark server
// process. Under load a stateless MCP server is bound by garbage
// collection: the go-sdk decodes every request's JSON several times with
// fresh buffers. Collecting less often (GOGC 400) halves the CPU per call
// (docs/performance.md), and a soft memory limit (256 MiB) keeps the heap
// bounded.
//
// It changes process-wide state, so a command calls it (the bulwark binary
// when it serves HTTP, bench/http's kernelserver), never a library: a
// program that embeds the kernel keeps its own setting.
package memory

import (
	"runtime/debug"
)

// The policy's settings.
const (
	gcPercent   = 400
	memoryLimit = 256 << 20
)

// Apply sets the process's garbage collector to GOGC 400 and a 256 MiB
// soft memory limit, unless the operator set GOGC or GOMEMLIMIT (read
// through getenv), whose values win. It returns what is in force.
func Apply(getenv func(string) string) (gc int, limit int64) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	gc = debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	return gc, debug.SetMemoryLimit(-1)
}
