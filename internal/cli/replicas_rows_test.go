package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// freeAddr is a loopback address no one listens on (yet).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startReplica runs `bulwark <args> -http <addr>` (addr "": a free loopback
// port) as an operator starts a replica, and returns its /mcp URL once it
// serves; the replica stops when the test ends.
func startReplica(t *testing.T, vars map[string]string, addr string, args ...string) string {
	t.Helper()
	if addr == "" {
		addr = freeAddr(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	env := &fakeEnv{vars: vars}
	var stderr syncBuffer
	done := make(chan int, 1)
	args = append(args[:len(args):len(args)], "-http", addr)
	go func() {
		done <- Run(ctx, Env{Args: args, Getenv: env.Getenv, Unsetenv: env.Unsetenv, Stdin: io.NopCloser(strings.NewReader("")),
			Stdout: nopCloser{io.Discard}, Stderr: &stderr})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), "serving Streamable HTTP"); time.Sleep(20 * time.Millisecond) {
		select {
		case code := <-done:
			t.Fatalf("the replica stopped (%d): %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not start: %s", stderr.String())
		}
	}
	return "http://" + addr + "/mcp"
}

// replicaCall posts one stateless tools/call (2025-11-25) to url with the
// bearer key, and returns the HTTP status and the JSON-RPC answer.
func replicaCall(t *testing.T, url, key, tool string, args map[string]any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	header := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	if key != "" {
		header["Authorization"] = "Bearer " + key
	}
	resp, raw := mcptest.Post(t, url, string(body), header)
	var out map[string]any
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal([]byte(raw), &out); err != nil {
			t.Fatalf("%s answered %q: %v", url, raw, err)
		}
	}
	return resp.StatusCode, out
}

// refusalCode is the error code of a refused call (a tool error's
// structured error code), or "" when the call ran.
func refusalCode(t *testing.T, out map[string]any) string {
	t.Helper()
	res, _ := out["result"].(map[string]any)
	if res == nil {
		b, _ := json.Marshal(out)
		return "jsonrpc:" + string(b)
	}
	if res["isError"] != true {
		return ""
	}
	sc, _ := res["structuredContent"].(map[string]any)
	errObj, _ := sc["error"].(map[string]any)
	code, _ := errObj["code"].(string)
	if code == "" {
		b, _ := json.Marshal(res)
		t.Fatalf("a refusal without a code: %s", b)
	}
	return code
}

// TestReplicasDecideAlikeFromTheSameFiles holds the inventory rows of state
// every replica reads from its own copy of a file (docs/operations.md):
// two `bulwark dns --http` replicas started from the same API-keys file and
// Cedar policy, on one Redis and one zone directory, each with its own audit
// file. The same key authenticates on both; the same call is allowed, or
// refused with the same code, on both; a policy change reaches both; a key
// added to the file is refused by both until a replica is started again;
// and the same call's audit records on the two replicas carry different
// argument digests (each process has its own digest key).
func TestReplicasDecideAlikeFromTheSameFiles(t *testing.T) {
	tg := storetest.New(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const aliceKey, carolKey = "replica-alice-key-0123456789", "replica-carol-key-0123456789"
	keys := write("keys", identity.HashKey(aliceKey)+" free alice groups=readers\n")
	policy := write("policy.cedar", "@id(\"readers-read\")\npermit (principal in Group::\"readers\", action in Action::\"readOnly\", resource);\n")
	redisURL := write("redis-url", tg.URL+"\n")
	zones := filepath.Join(dir, "zones")
	flags := func(audit string) []string {
		return []string{"dns", "-auth", "apikey", "-api-keys-file", keys, "-authz-policy", policy,
			"-redis-url-file", redisURL, "-data-dir", zones, "-dns-listen", "off", "-audit", filepath.Join(dir, audit)}
	}
	a, b := startReplica(t, nil, "", flags("audit-a")...), startReplica(t, nil, "", flags("audit-b")...)
	replicas := map[string]string{"A": a, "B": b}

	// The same key, the same policy: the same decisions.
	for name, url := range replicas {
		if status, out := replicaCall(t, url, aliceKey, "list_zones", map[string]any{}); status != 200 || refusalCode(t, out) != "" {
			t.Fatalf("replica %s: alice's list_zones: HTTP %d %v", name, status, out)
		}
	}
	create := map[string]any{"name": "alike.example", "mode": "primary"}
	codes := map[string]string{}
	for name, url := range replicas {
		status, out := replicaCall(t, url, aliceKey, "create_zone", create)
		if status != 200 {
			t.Fatalf("replica %s: alice's create_zone: HTTP %d", name, status)
		}
		codes[name] = refusalCode(t, out)
	}
	if codes["A"] == "" || codes["A"] != codes["B"] {
		t.Fatalf("the policy permits no write, yet the replicas answered %q", codes)
	}
	if codes["A"] != "permission_denied" {
		t.Fatalf("the write was refused for another reason: %q", codes)
	}

	// A policy change reaches every replica (each watches its copy).
	write("policy.cedar", "@id(\"readers-all\")\npermit (principal in Group::\"readers\", action, resource);\n")
	for name, url := range replicas {
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			// the write runs on the first replica to reload; on the other,
			// the zone the first made in the shared directory exists.
			_, out := replicaCall(t, url, aliceKey, "create_zone", create)
			code := refusalCode(t, out)
			if code == "" || code == "already_exists" {
				break
			}
			if code != "permission_denied" || time.Now().After(deadline) {
				t.Fatalf("replica %s still refuses under the new policy: %s", name, code)
			}
		}
	}

	// A key added to the file: read at start, so refused by the running
	// replicas, accepted by one started afterwards.
	f, err := os.OpenFile(keys, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(identity.HashKey(carolKey) + " free carol groups=readers\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for name, url := range replicas {
		if status, _ := replicaCall(t, url, carolKey, "list_zones", map[string]any{}); status != http.StatusUnauthorized {
			t.Fatalf("replica %s took a key added after it started: HTTP %d", name, status)
		}
	}
	c := startReplica(t, nil, "", flags("audit-c")...)
	if status, out := replicaCall(t, c, carolKey, "list_zones", map[string]any{}); status != 200 || refusalCode(t, out) != "" {
		t.Fatalf("a replica started after the key was added refused it: HTTP %d %v", status, out)
	}

	// The same call on A and B: each audit record's digest is keyed per
	// process, so the two differ.
	digest := func(audit string) string {
		fh, err := os.Open(filepath.Join(dir, audit))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		var last string
		for sc := bufio.NewScanner(fh); sc.Scan(); {
			var rec struct {
				Tool, Principal string
				Digest          string `json:"args_digest"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Tool == "create_zone" && rec.Principal != "" {
				last = rec.Digest
			}
		}
		if last == "" {
			t.Fatalf("%s has no create_zone record", audit)
		}
		return last
	}
	if da, db := digest("audit-a"), digest("audit-b"); da == db {
		t.Fatalf("the same call carries the same argument digest on two replicas: %s", da)
	}
}

// TestReplicasFloodGuardIsPerProcess holds the flood guard's row: the limit
// bounds what one address makes one process do, so an address may send the
// limit to each replica, and one more to a replica is refused there.
func TestReplicasFloodGuardIsPerProcess(t *testing.T) {
	const limit = 5
	flags := []string{"dns", "-data-dir", t.TempDir(), "-dns-listen", "off", "-flood-limit", "5"}
	a, b := startReplica(t, nil, "", flags...), startReplica(t, nil, "", flags...)
	for _, url := range []string{a, b} {
		for i := range limit {
			if status, _ := replicaCall(t, url, "", "list_zones", map[string]any{}); status != 200 {
				t.Fatalf("%s: request %d of the address's %d: HTTP %d", url, i+1, limit, status)
			}
		}
	}
	if status, _ := replicaCall(t, a, "", "list_zones", map[string]any{}); status != http.StatusTooManyRequests {
		t.Fatalf("one request over the limit on replica A: HTTP %d", status)
	}
}
