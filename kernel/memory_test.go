package kernel_test

import (
	"runtime/debug"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
)

func TestApplyMemoryPolicy(t *testing.T) {
	oldGC, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(oldGC); debug.SetMemoryLimit(oldLimit) })
	none := func(string) string { return "" }
	if gc, limit := kernel.ApplyMemoryPolicy(nil, none); gc != kernel.DefaultGCPercent || limit != kernel.DefaultMemoryLimit {
		t.Fatalf("defaults: %d %d", gc, limit)
	}
	debug.SetGCPercent(100)
	operator := func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	}
	if gc, _ := kernel.ApplyMemoryPolicy(&kernel.MemoryPolicy{GCPercent: 800}, operator); gc != 100 {
		t.Fatalf("the operator's GOGC did not win: %d", gc)
	}
}
