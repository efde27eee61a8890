package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
)

// TestMain lets the test binary act as the hostile upstream the gateway
// spawns (mcpupstream.EnvVar=1 in the child's allowlisted environment).
func TestMain(m *testing.M) {
	mcpupstream.MaybeServe()
	os.Exit(m.Run())
}

func TestGatewayOneServerEndToEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	env := &fakeEnv{vars: map[string]string{mcpupstream.EnvVar: "1"}}
	var stderr syncBuffer
	done := make(chan int, 1)
	args := []string{"gateway", "-env", mcpupstream.EnvVar, "-prefix", "fake", "-read-only-tools", "echo,inject", "-target-arg", "path", "--", os.Args[0]}
	go func() {
		done <- Run(ctx, Env{Args: args, Getenv: env.Getenv, Unsetenv: env.Unsetenv, Stdin: sr, Stdout: sw, Stderr: &stderr})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	if out := call(t, cs, "fake.echo", map[string]any{"text": "hello"}); !strings.Contains(out, `<untrusted-data source="mcp-upstream">`) || !strings.Contains(out, "hello") {
		t.Fatalf("echo: %s", out)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake.delete_file", Arguments: map[string]any{"path": "/x"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "confirmToken") {
		t.Fatalf("delete_file, on no list, is not gated: %v %s", err, resultText(res))
	}
	cs.Close()
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

func TestGatewayConfigurationMistakes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[[upstream]]\nname = \"a\"\ncommand = \"x\"\ndeny_tool = [\"rm\"]\n"), 0o600)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"gateway"}, "nothing to front"},
		{[]string{"gateway", "-config", bad}, "deny_tool"},
		{[]string{"gateway", "-config", filepath.Join(dir, "missing.toml")}, "cannot read"},
		{[]string{"gateway", "-config", bad, "--", "x"}, "not both"},
		{[]string{"gateway", "-read-only-tools", "t", "-confirm-tools", "t", "--", "x"}, "contradict"},
		{[]string{"gateway", "--", filepath.Join(dir, "no-such-binary")}, "starting"},
	}
	for _, c := range cases {
		code, _, errOut := run(t, map[string]string{}, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want an error with %q", c.args, code, errOut, c.want)
		}
	}
}
