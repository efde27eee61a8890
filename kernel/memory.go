package kernel

import (
	"runtime/debug"
)

// Defaults of a MemoryPolicy.
const (
	DefaultGCPercent   = 400
	DefaultMemoryLimit = 256 << 20
)

// MemoryPolicy is the garbage collector's setting for a server process.
// Under load a stateless MCP server is bound by garbage collection: the
// go-sdk decodes every request's JSON several times with fresh buffers.
// Collecting less often (GOGC 400) halves the CPU per call
// (docs/performance.md), and a soft memory limit keeps the heap bounded.
type MemoryPolicy struct {
	// GCPercent is GOGC; DefaultGCPercent when zero.
	GCPercent int
	// Limit is the soft memory limit in bytes (GOMEMLIMIT);
	// DefaultMemoryLimit when zero.
	Limit int64
}

// ApplyMemoryPolicy sets the process's garbage collector from p (nil: the
// defaults), unless the operator set GOGC or GOMEMLIMIT, whose values win.
// It changes process-wide state, so a command calls it, never a library: a
// program that embeds the kernel keeps its own setting. It returns what is
// in force.
func ApplyMemoryPolicy(p *MemoryPolicy, getenv func(string) string) (gcPercent int, limit int64) {
	var pol MemoryPolicy
	if p != nil {
		pol = *p
	}
	if pol.GCPercent == 0 {
		pol.GCPercent = DefaultGCPercent
	}
	if pol.Limit == 0 {
		pol.Limit = DefaultMemoryLimit
	}
	if getenv("GOGC") == "" {
		debug.SetGCPercent(pol.GCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(pol.Limit)
	}
	gcPercent = debug.SetGCPercent(-1)
	debug.SetGCPercent(gcPercent)
	return gcPercent, debug.SetMemoryLimit(-1)
}
