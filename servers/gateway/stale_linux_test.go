package gateway_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// TestRemoveStaleNestedCgroups: the cgroup a killed gateway left behind is
// removed even when its upstream made cgroups inside it (a nested
// gateway's), and at once — a leftover it cannot remove would cost every
// later upstream start its 5 s wait.
func TestRemoveStaleNestedCgroups(t *testing.T) {
	base := gateway.CgroupBase()
	if base == "" {
		t.Skip("no cgroup v2 directory of our own")
	}
	// 4194303 is pid_max's ceiling: no gateway runs as it here
	if _, err := os.Stat("/proc/4194303"); err == nil {
		t.Skip("pid 4194303 runs")
	}
	top := filepath.Join(base, "bulwark-upstream-4194303-1")
	if err := os.MkdirAll(filepath.Join(top, "bulwark-upstream-7-1", "deeper"), 0o755); err != nil {
		t.Skipf("cannot make cgroups here: %v", err)
	}
	t.Cleanup(func() {
		_ = os.Remove(filepath.Join(top, "bulwark-upstream-7-1", "deeper"))
		_ = os.Remove(filepath.Join(top, "bulwark-upstream-7-1"))
		_ = os.Remove(top)
	})
	start := time.Now()
	gateway.RemoveStale(base)
	if _, err := os.Stat(top); !os.IsNotExist(err) {
		t.Fatalf("the stale cgroup is still there: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("removing it took %v", d)
	}
}
