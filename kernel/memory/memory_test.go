package memory

import (
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	oldGC, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(oldGC); debug.SetMemoryLimit(oldLimit) })
	none := func(string) string { return "" }
	if gc, limit := Apply(none); gc != gcPercent || limit != memoryLimit {
		t.Fatalf("defaults: %d %d", gc, limit)
	}
	if gcPercent != 200 || memoryLimit != 256<<20 {
		t.Fatalf("the documented policy is GOGC 200 and 256 MiB: %d %d", gcPercent, memoryLimit)
	}
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(1 << 40)
	operator := func(k string) string {
		switch k {
		case "GOGC":
			return "100"
		case "GOMEMLIMIT":
			return "1TiB"
		}
		return ""
	}
	if gc, limit := Apply(operator); gc != 100 || limit != 1<<40 {
		t.Fatalf("the operator's GOGC/GOMEMLIMIT did not win: %d %d", gc, limit)
	}
}
