package bootenv

import (
	"os"
	"strings"
	"testing"
)

// When the re-exec fails (no /proc), startup goes on: the secrets are
// handed to the command from memory, gone from Go's environment, and a
// warning says the kernel's copy still holds them.
func TestHideFallsBackWhenExecFails(t *testing.T) {
	old := selfExe
	selfExe = "/nonexistent/bulwark"
	defer func() { selfExe = old }()
	t.Setenv("MCP_AEAD_KEY", "k3y")
	v, err := Hide()
	if err != nil {
		t.Fatal(err)
	}
	if v.Getenv("MCP_AEAD_KEY") != "k3y" || os.Getenv("MCP_AEAD_KEY") != "" {
		t.Fatalf("handed %q, environment %q", v.Getenv("MCP_AEAD_KEY"), os.Getenv("MCP_AEAD_KEY"))
	}
	if !strings.Contains(v.Warning, "re-executing without the secret variables failed") || strings.Contains(v.Warning, "k3y") {
		t.Fatalf("warning %q", v.Warning)
	}
	if v.Unsetenv("MCP_AEAD_KEY"); v.Getenv("MCP_AEAD_KEY") != "" {
		t.Fatal("a secret is read once: Unsetenv must forget it")
	}
}
