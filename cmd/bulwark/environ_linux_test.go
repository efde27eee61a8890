package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
)

// The secret variables must be gone from the environment the kernel keeps
// for the process (/proc/<pid>/environ), not only from Go's copy, and the
// server must still authenticate with them.
func TestSecretsAbsentFromProcEnviron(t *testing.T) {
	bin := binary(t)
	token := "bulwark-test-secret-7f3a9c"
	aead := "bulwark-test-aead-key-0b41"
	api := hetznerapi.Start(t, &hetznerapi.Options{Token: token})
	if _, err := api.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "dns", "-log-level", "debug")
	cmd.Env = append(baseEnv(), "HETZNER_API_TOKEN="+token, "HETZNER_API_BASE_URL="+api.URL(), "MCP_AEAD_KEY="+aead)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "environ-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	pid := cmd.Process.Pid

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_zones", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_zones: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "example.com") {
		t.Fatalf("list_zones did not authenticate with the handed-over token: %s", text)
	}

	environ, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{token, aead, api.URL(), "HETZNER_API_TOKEN", "MCP_AEAD_KEY", "HETZNER_API_BASE_URL"} {
		if strings.Contains(string(environ), secret) {
			t.Errorf("/proc/%d/environ holds %q", pid, secret)
		}
		if strings.Contains(string(cmdline), secret) {
			t.Errorf("/proc/%d/cmdline holds %q", pid, secret)
		}
	}
	// The binary re-executed itself, and the hand-over pipe it named was
	// read and closed.
	fd := ""
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, "BULWARK_SECRETS_FD="); ok {
			fd = v
		}
	}
	if fd == "" {
		t.Fatal("no BULWARK_SECRETS_FD: the binary did not hand the secrets over")
	}
	// Its number may be in use again: stdin and stdout, pipes, are reopened
	// as descriptors of the server's own (kernel/pipeio), the same pipes.
	link := func(n string) string {
		target, _ := os.Readlink(filepath.Join("/proc", itoa(pid), "fd", n))
		return target
	}
	if target := link(fd); strings.HasPrefix(target, "pipe:") && target != link("0") && target != link("1") {
		t.Errorf("the hand-over descriptor %s is still open (%s)", fd, target)
	}
	if strings.Contains(stderr.String(), token) {
		t.Error("the token was printed")
	}
}

// A BULWARK_SECRETS_FD that this program did not hand over (stdin, a pipe
// someone holds open, a number that is no descriptor) is refused at once,
// never read as secrets and never waited on.
func TestHandoverVariableHostile(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // held open: a blocking read would hang
	for _, fd := range []string{"0", "1", "2", "3", "99", "-1", "x"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, binary(t), "version")
		cmd.Env = append(baseEnv(), "BULWARK_SECRETS_FD="+fd)
		cmd.Stdin = r
		cmd.ExtraFiles = []*os.File{r} // fd 3: an open pipe with nothing in it
		out, err := cmd.CombinedOutput()
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Fatalf("BULWARK_SECRETS_FD=%s: hung", fd)
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "BULWARK_SECRETS_FD") {
			t.Errorf("BULWARK_SECRETS_FD=%s: %v %q", fd, err, out)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
