package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const cliPolicy = `@id("team-a") permit(principal in Group::"team-a", action, resource is Dns::Zone) when { resource.zone like "*.team-a.example" };
@id("no-ns") forbid(principal, action == Action::"create_rrset", resource) when { context.arguments.type == "NS" };`

const cliEntities = `[{"uid": {"type": "User", "id": "alice"}, "parents": [{"type": "Group", "id": "team-a"}], "attrs": {}}]`

// TestAuthzCheck: the decision and the deciding policies, with the target
// in canonical form.
func TestAuthzCheck(t *testing.T) {
	pol, ents := writeFile(t, "p.cedar", cliPolicy), writeFile(t, "e.json", cliEntities)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-principal", "alice", "-tool", "get_zone", "-args", `{"zone": "WWW.Team-A.Example."}`},
			[]string{"ALLOW", `resource:  Dns::Zone::"www.team-a.example"`, "decided by: team-a"}},
		{[]string{"-principal", "alice", "-tool", "get_zone", "-args", `{"zone": "bob.example"}`},
			[]string{"DENY", "no policy permits it"}},
		{[]string{"-principal", "alice", "-tool", "create_rrset", "-args", `{"zone": "x.team-a.example", "name": "sub", "type": "NS", "records": [{"value": "ns.example."}]}`},
			[]string{"DENY", "decided by: no-ns"}},
	} {
		code, out, errs := run(t, nil, append([]string{"authz", "check", "-server", "dns", "-policy", pol, "-entities", ents}, tc.args...)...)
		wantCode := 0
		if strings.HasPrefix(tc.want[0], "DENY") {
			wantCode = 1
		}
		for _, w := range tc.want {
			if code != wantCode || !strings.Contains(out, w) {
				t.Errorf("%v: code %d, out %q (stderr %q), want %q", tc.args, code, out, errs, w)
			}
		}
	}
	// Groups and scopes given on the command line reach the decision, as an
	// API-key file's groups= or a token's claims would.
	grp := writeFile(t, "g.cedar", `@id("ops-read") permit (principal, action == Action::"get_zone", resource) when { principal.groups.contains("ops") && principal.scopes.contains("dns:read") };`)
	for _, tc := range []struct {
		groups, scopes, want string
	}{{"dev, ops", "dns:read", "decided by: ops-read"}, {"dev", "dns:read", "DENY"}, {"ops", "", "DENY"}} {
		code, out, errs := run(t, nil, "authz", "check", "-server", "dns", "-policy", grp, "-principal", "carol", "-groups", tc.groups, "-scopes", tc.scopes, "-tool", "get_zone", "-args", `{"zone": "a.example"}`)
		if wantCode := map[bool]int{true: 1, false: 0}[tc.want == "DENY"]; code != wantCode || !strings.Contains(out, tc.want) {
			t.Errorf("groups %q scopes %q: code %d, out %q (stderr %q), want %q", tc.groups, tc.scopes, code, out, errs, tc.want)
		}
	}
	code, _, errs := run(t, nil, "authz", "check", "-server", "dns", "-policy", pol, "-principal", "a", "-tool", "get_zone", "-args", `{"zone": 7}`)
	if code != 2 || !strings.Contains(errs, "zone") {
		t.Errorf("bad arguments: code %d, %q", code, errs)
	}
	code, out, _ := run(t, nil, "authz", "schema", "-server", "rustpad")
	if code != 0 || !strings.Contains(out, `entity Pad { "id": String }`) || !strings.Contains(out, `action "set_document" in ["write", "destructive"]`) {
		t.Errorf("schema: %d %s", code, out)
	}
}

// TestAuthzPolicyStopsStartup: a policy that names an unknown tool stops
// bulwark dns with a readable error; -authz-entities alone is a usage error.
func TestAuthzPolicyStopsStartup(t *testing.T) {
	bad := writeFile(t, "p.cedar", `@id("typo") permit(principal, action == Action::"delete_zones", resource);`)
	code, _, errs := run(t, nil, "dns", "-data-dir", t.TempDir(), "-dns-listen", "off", "-authz-policy", bad)
	if code != 2 || !strings.Contains(errs, `policy "typo"`) || !strings.Contains(errs, "delete_zones") {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	code, _, errs = run(t, map[string]string{"BULWARK_AUTHZ_ENTITIES": writeFile(t, "e.json", "[]")}, "dns", "-data-dir", t.TempDir(), "-dns-listen", "off")
	if code != 2 || !strings.Contains(errs, "-authz-entities needs -authz-policy") {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
}

// TestAuthzPolicyFromEnvOverStdio: BULWARK_AUTHZ_POLICY applies to the
// stdio principal "local"; a change of the file is picked up while serving.
func TestAuthzPolicyFromEnvOverStdio(t *testing.T) {
	pol := writeFile(t, "p.cedar", `@id("reads") permit(principal == User::"local", action in Action::"readOnly", resource);`)
	cs, _, _ := session(t, map[string]string{"BULWARK_AUTHZ_POLICY": pol}, "-data-dir", t.TempDir(), "-dns-listen", "off")
	tools := listToolNames(t, cs)
	if strings.Contains(strings.Join(tools, ","), "create_zone") || !strings.Contains(strings.Join(tools, ","), "list_zones") {
		t.Fatalf("tools/list: %v", tools)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_zone", Arguments: map[string]any{"name": "a.example", "mode": "primary"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "permission_denied") {
		t.Fatalf("create_zone: %v %+v", err, res)
	}
	if err := os.WriteFile(pol, []byte(`@id("all") permit(principal, action, resource);`), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_zone", Arguments: map[string]any{"name": "a.example", "mode": "primary"}})
		if err == nil && !res.IsError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the changed policy file was never picked up")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAuthzCheckGateway: `bulwark authz check` and `authz schema` speak of
// a gateway's tools (-server gateway -config FILE), decide on every target
// in canonical form, and exit 0 on an allow, 1 on a deny, 2 on an error.
func TestAuthzCheckGateway(t *testing.T) {
	cfg := writeFile(t, "gw.toml", fmt.Sprintf("[[upstream]]\nname = \"fs\"\ncommand = %q\nenv = [%q]\npublic_env = [%[2]q]\nread_only_tools = [\"read_text_file\", \"read_multiple_files\"]\n"+
		"target_arg = \"path\"\ntarget_args = { move_file = [\"source\", \"destination\"], read_multiple_files = \"paths\" }\n", os.Args[0], mcpupstream.EnvVar))
	pol := writeFile(t, "p.cedar", `@id("alice-home") permit(principal == User::"alice", action, resource is Gateway::Target) when { resource.value like "/srv/alice/*" };`)
	vars := map[string]string{mcpupstream.EnvVar: "1"}
	check := func(tool, args string) (int, string, string) {
		return run(t, vars, "authz", "check", "-server", "gateway", "-config", cfg, "-policy", pol, "-principal", "alice", "-tool", tool, "-args", args)
	}
	code, out, errs := check("fs.read_text_file", `{"path": "/srv/alice/./notes//a.txt"}`)
	if code != 0 || !strings.Contains(out, "ALLOW") || !strings.Contains(out, `resource:  Gateway::Target::"fs:/srv/alice/notes/a.txt"`) || !strings.Contains(out, "decided by: alice-home") {
		t.Errorf("allowed read: code %d\n%s%s", code, out, errs)
	}
	code, out, errs = check("fs.read_text_file", `{"path": "/srv/alice/../bob/secret.txt"}`)
	if code != 1 || !strings.Contains(out, "DENY") || !strings.Contains(out, `Gateway::Target::"fs:/srv/bob/secret.txt"`) {
		t.Errorf("denied read: code %d\n%s%s", code, out, errs)
	}
	code, out, errs = check("fs.move_file", `{"source": "/srv/alice/a", "destination": "/srv/bob/a"}`)
	if code != 1 || !strings.Contains(out, `Gateway::Target::"fs:/srv/alice/a"  ALLOW (alice-home)`) || !strings.Contains(out, `Gateway::Target::"fs:/srv/bob/a"  DENY (no policy permits it`) {
		t.Errorf("a move into bob's directory: code %d\n%s%s", code, out, errs)
	}
	if code, _, errs = check("fs.read_text_file", `{"path": "../etc/passwd"}`); code != 2 || !strings.Contains(errs, "not absolute") {
		t.Errorf("a relative path: code %d, %s", code, errs)
	}
	if code, _, errs = run(t, vars, "authz", "check", "-server", "gateway", "-policy", pol, "-principal", "alice", "-tool", "fs.echo"); code != 2 || !strings.Contains(errs, "-config") {
		t.Errorf("no -config: code %d, %s", code, errs)
	}
	code, out, errs = run(t, vars, "authz", "schema", "-server", "gateway", "-config", cfg)
	if code != 0 || !strings.Contains(out, `"argument": String`) || !strings.Contains(out, `action "fs.move_file"`) {
		t.Errorf("schema: code %d\n%s%s", code, out, errs)
	}
}

// TestAuthzGatewayResources: for a gateway whose upstream serves
// resources, `authz schema` declares the action "resources/read" on
// Gateway::Resource, and `authz check` loads a policy that speaks of it.
func TestAuthzGatewayResources(t *testing.T) {
	cfg := writeFile(t, "gw.toml", fmt.Sprintf("[[upstream]]\nname = \"fs\"\ncommand = %q\nenv = [%q, %q]\npublic_env = [%[2]q, %[3]q]\nread_only_tools = [\"echo\"]\n",
		os.Args[0], mcpupstream.EnvVar, mcpupstream.ResourcesVar))
	vars := map[string]string{mcpupstream.EnvVar: "1", mcpupstream.ResourcesVar: "1"}
	code, out, errs := run(t, vars, "authz", "schema", "-server", "gateway", "-config", cfg)
	if code != 0 || !strings.Contains(out, `action "resources/read" in ["readOnly"]`) || !strings.Contains(out, "entity Resource {") {
		t.Errorf("schema: code %d\n%s%s", code, out, errs)
	}
	pol := writeFile(t, "p.cedar", `permit(principal, action, resource);
forbid(principal, action == Action::"resources/read", resource is Gateway::Resource) when { resource.uri like "file:///private/*" };`)
	code, out, errs = run(t, vars, "authz", "check", "-server", "gateway", "-config", cfg, "-policy", pol, "-principal", "alice", "-tool", "fs.echo", "-args", `{"text":"x"}`)
	if code != 0 || !strings.Contains(out, "ALLOW") {
		t.Errorf("check: code %d\n%s%s", code, out, errs)
	}
}
