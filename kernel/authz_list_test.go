package kernel_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
)

// TestFilteredListOverStdio: under a policy that lets the stdio principal
// call nothing, tools/list answers an empty list (never null) marked
// private, with the stdio fast path on and off.
func TestFilteredListOverStdio(t *testing.T) {
	pf := filepath.Join(t.TempDir(), "p.cedar")
	if err := os.WriteFile(pf, []byte(`@id("ops") permit(principal == User::"ops", action, resource);`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, disable := range []bool{false, true} {
		srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, testTools(new([]string)), &kernel.Options{Authz: &authz.Config{PolicyFile: pf}})
		if err != nil {
			t.Fatal(err)
		}
		got := newStdioRoundTrip(t, srv, disable).do(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if !strings.Contains(got, `"tools":[]`) || !strings.Contains(got, `"cacheScope":"private"`) {
			t.Errorf("fast path off=%v: %s", disable, got)
		}
	}
}
