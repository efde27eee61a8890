// Package memory is the garbage collector's setting for a bulwark server
// process. Under load a stateless MCP server is bound by garbage
// collection: the go-sdk decodes every request's JSON several times with
// fresh buffers. Collecting less often (GOGC 200) cuts the CPU per call
// (docs/performance.md), and a soft memory limit (256 MiB) keeps the heap
// bounded. GOGC is 200, not higher, because the heap goal grows with the
// live heap and the goroutine stacks of every open connection: at 1,000
// concurrent clients GOGC 400 took the process to 140-160 MiB resident,
// GOGC 200 to about 100 MiB (bench/http's soak, bound 128 MiB).
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
	gcPercent   = 200
	memoryLimit = 256 << 20
)

// Apply sets the process's garbage collector to GOGC 200 and a 256 MiB
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
