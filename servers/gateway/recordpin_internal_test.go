package gateway

import (
	"sync"
	"testing"
)

// TestRecordPin: the audit's pin is the last one checked, for a first
// check, the same hash again and a changed one, and recording the hash a
// tool already has allocates nothing (a sync.Map's Store allocated on every
// relayed call).
func TestRecordPin(t *testing.T) {
	var m sync.Map
	get := func() string { h, _ := m.Load("fs.read"); s, _ := h.(string); return s }
	for _, h := range []string{"sha256:a", "sha256:a", "sha256:b", "sha256:a", "sha256:a"} {
		recordPin(&m, "fs.read", h)
		if get() != h {
			t.Fatalf("pin %q after recording %q", get(), h)
		}
	}
	if n := testing.AllocsPerRun(100, func() { recordPin(&m, "fs.read", "sha256:a") }); n != 0 {
		t.Fatalf("recording an unchanged pin allocates %v times, want 0", n)
	}
}
