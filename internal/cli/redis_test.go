package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// TestRedisSettingsRefused: Redis settings that cannot work stop startup
// with a usage error that names the setting and never the password.
func TestRedisSettingsRefused(t *testing.T) {
	mr := miniredis.RunT(t)
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("s3cr3t-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		url  string
		args []string
		want string
	}{
		{"password file without a URL", "", []string{"-redis-password-file", pw}, "without a Redis URL"},
		{"password in the URL and in a file", "redis://:s3cr3t@" + mr.Addr() + "/0", []string{"-redis-password-file", pw}, "password file is given too"},
		{"TLS checks off", "rediss://:s3cr3t@" + mr.Addr() + "/0?skip_verify=true", nil, "skip_verify"},
		{"unknown option", "redis://:s3cr3t@" + mr.Addr() + "?addr=" + mr.Addr() + "&s3cr3t=1", nil, "BULWARK_REDIS_URL"},
		{"empty master name", "redis://:s3cr3t@" + mr.Addr() + "?master_name=", nil, "master_name"},
		{"negative wait", "redis://:s3cr3t@" + mr.Addr() + "/0", []string{"-redis-wait-replicas", "-1"}, "-redis-wait-replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{}
			if tc.url != "" {
				vars["BULWARK_REDIS_URL"] = tc.url
			}
			args := append([]string{"dns", "-dns-listen", "off", "-data-dir", t.TempDir()}, tc.args...)
			code, _, errOut := run(t, vars, args...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "s3cr3t") {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
		})
	}
}

// TestRedisClientLogOncePerOutage: with the shared store down, every gated
// call is refused as store_unavailable and the log says so once; go-redis's
// own lines (several per refused call) are at debug level only.
func TestRedisClientLogOncePerOutage(t *testing.T) {
	for _, level := range []string{"info", "debug"} {
		t.Run(level, func(t *testing.T) {
			r := storetest.NewRestartable(t)
			api := hetznerapi.Start(t, nil)
			if _, err := api.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{"HETZNER_API_TOKEN": api.Token(), "HETZNER_API_BASE_URL": api.URL(),
				"BULWARK_REDIS_URL": "redis://" + r.Addr + "/0?max_retries=1&dial_timeout=200ms"}
			cs, _, stderr := session(t, vars, "-log-level", level)
			r.Stop()
			for range 5 {
				res := callResult(t, cs, "delete_zone", map[string]any{"zone": "example.com"})
				if !strings.Contains(res, "store_unavailable") {
					t.Fatalf("a gated call with the store down: %s", res)
				}
			}
			log := stderr.String()
			if n := strings.Count(log, "shared store unreachable"); n != 1 {
				t.Fatalf("the outage was logged %d times:\n%s", n, log)
			}
			lib := strings.Count(log, `msg="redis client"`)
			if level == "info" && lib != 0 || level == "debug" && lib == 0 {
				t.Fatalf("at %s, %d lines of go-redis's own:\n%s", level, lib, log)
			}
			if strings.Contains(log, "redis: ") && !strings.Contains(log, `msg="redis client"`) {
				t.Fatalf("a go-redis line bypassed the logger:\n%s", log)
			}
		})
	}
}

// callResult calls a tool and returns its text, error or not.
func callResult(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
