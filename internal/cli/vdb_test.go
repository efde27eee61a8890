package cli

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
)

const testAEAD = "6f3c0a9e1b2d4c5f67788990aabbccddeeff00112233445566778899aabbccdd"

// vdbSession runs `bulwark vdb` over stdio with vars and connects a client.
func vdbSession(t *testing.T, vars map[string]string, args ...string) (*mcp.ClientSession, *fakeEnv, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	env := &fakeEnv{vars: vars}
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Env{Args: append([]string{"vdb"}, args...), Getenv: env.Getenv, Unsetenv: env.Unsetenv, Stdin: sr, Stdout: sw, Stderr: &stderr})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("bulwark vdb did not stop")
		}
	})
	return cs, env, &stderr
}

// TestVDBCredentialsReadOnceAndRemoved: the key, the base URLs and the
// sealing key are read once and removed from the environment; the key is
// never printed; data tools answer inside the envelope.
func TestVDBCredentialsReadOnceAndRemoved(t *testing.T) {
	fake := vdbapi.Start(t, nil)
	key := fake.AddKey(vdbapi.OrgA, "secret-a")
	vars := map[string]string{"VULNETIX_API_KEY": key, "VULNETIX_API_BASE_URL": fake.APIURL(),
		"VULNETIX_SITE_BASE_URL": fake.SiteURL(), "MCP_AEAD_KEY": testAEAD,
		"BULWARK_VDB_KEY_FILE": filepath.Join(t.TempDir(), "key")}
	cs, env, stderr := vdbSession(t, vars)
	out := call(t, cs, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	if !strings.Contains(out, `<untrusted-data source="vulnetix-vdb">`) {
		t.Fatalf("vdb_kev_status: %s", out)
	}
	for _, k := range []string{"VULNETIX_API_KEY", "VULNETIX_API_BASE_URL", "VULNETIX_SITE_BASE_URL", "MCP_AEAD_KEY"} {
		if env.Getenv(k) != "" {
			t.Errorf("%s still in the environment", k)
		}
	}
	_, hex, _ := strings.Cut(key, ":")
	if strings.Contains(stderr.String(), hex) || strings.Contains(out, hex) || strings.Contains(stderr.String(), testAEAD) {
		t.Fatal("a secret was printed")
	}
	if names := listToolNames(t, cs); !slices.Contains(names, "vdb_auth_start") || len(names) != 31 {
		t.Fatalf("tools: %v", names)
	}
}

// TestVDBWithoutAEADKeyNoSignIn: without MCP_AEAD_KEY the sign-in tools
// are not registered, and startup says why.
func TestVDBWithoutAEADKeyNoSignIn(t *testing.T) {
	fake := vdbapi.Start(t, nil)
	cs, _, stderr := vdbSession(t, map[string]string{"VULNETIX_API_BASE_URL": fake.APIURL(), "VULNETIX_SITE_BASE_URL": fake.SiteURL()})
	for _, n := range listToolNames(t, cs) {
		if strings.HasPrefix(n, "vdb_auth") {
			t.Fatalf("%s registered", n)
		}
	}
	if !strings.Contains(stderr.String(), "sign-in tools") || !strings.Contains(stderr.String(), "MCP_AEAD_KEY") {
		t.Fatalf("startup did not say why: %s", stderr.String())
	}
}

// TestVDBInvalidConfigurationStops: base URLs follow Hetzner's rules, a
// configured key over HTTP is refused (one shared quota for every caller),
// and a weak sealing key stops startup; no secret is echoed.
func TestVDBInvalidConfigurationStops(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"plain http beyond loopback", map[string]string{"VULNETIX_API_BASE_URL": "http://api.example.com"}, nil, "http is allowed only for loopback"},
		{"credentials in the URL", map[string]string{"VULNETIX_SITE_BASE_URL": "https://u:s3cr3t@www.example.com"}, nil, "credentials in the url"},
		{"key over http", map[string]string{"VULNETIX_API_KEY": "org:s3cr3t"}, []string{"-http", "127.0.0.1:0"}, "over HTTP each caller brings its own"},
		{"weak sealing key", map[string]string{"MCP_AEAD_KEY": "s3cr3t"}, nil, "MCP_AEAD_KEY"},
		{"call timeout over 5m", nil, []string{"-call-timeout", "10m"}, "CallTimeout 10m0s is outside 0..5m"},
		{"call timeout not a duration", map[string]string{"BULWARK_VDB_CALL_TIMEOUT": "soon"}, nil, "BULWARK_VDB_CALL_TIMEOUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, tc.vars, append([]string{"vdb"}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "s3cr3t") {
				t.Fatalf("exit %d: %s", code, errOut)
			}
		})
	}
}
