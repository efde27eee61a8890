package gateway_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// exampleConfig is the README's example (docs/gateway.md too).
const exampleConfig = `
call_timeout = "30s"

[[upstream]]
name = "fs"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem@2026.1.14", "/home/me/notes"]
env = ["PATH", "HOME"]
read_only_tools = ["read_file", "read_text_file", "read_media_file", "read_multiple_files",
  "list_directory", "list_directory_with_sizes", "directory_tree", "search_files",
  "get_file_info", "list_allowed_directories"]
write_tools = ["create_directory"]
target_arg = "path"
target_args = { move_file = "source" }
target_kinds = { ticket = "string" }
roots = ["/home/me/notes"]
max_result_bytes = 1048576
`

func TestParseConfigExample(t *testing.T) {
	c, err := gateway.ParseConfig([]byte(exampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	u := c.Upstreams[0]
	if u.Name != "fs" || u.Command != "npx" || len(u.Args) != 3 || len(u.TargetArgs["move_file"]) != 1 || u.TargetArgs["move_file"][0] != "source" || u.TargetKinds["ticket"] != gateway.KindString || u.Roots[0] != "/home/me/notes" || time.Duration(c.CallTimeout) != 30*time.Second {
		t.Fatalf("%+v", c)
	}
}

// target_args takes one argument (the form before lists, still valid) or
// a list of them.
func TestParseConfigTargetLists(t *testing.T) {
	c, err := gateway.ParseConfig([]byte("[[upstream]]\nname = \"fs\"\ncommand = \"x\"\ntarget_args = { move_file = [\"source\", \"destination\"], read_multiple_files = \"paths\" }\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Upstreams[0].TargetArgs
	if strings.Join(got["move_file"], ",") != "source,destination" || strings.Join(got["read_multiple_files"], ",") != "paths" {
		t.Fatalf("%q", got)
	}
}

func TestParseConfigRefuses(t *testing.T) {
	cases := map[string]string{
		"unknown key":           "[[upstream]]\nname = \"a\"\ncommand = \"x\"\ndeny_tool = [\"rm\"]\n",
		"unknown top key":       "timeout = \"1s\"\n[[upstream]]\nname = \"a\"\ncommand = \"x\"\n",
		"no upstream":           "call_timeout = \"1s\"\n",
		"command and url":       "[[upstream]]\nname = \"a\"\ncommand = \"x\"\nurl = \"https://example.com/mcp\"\n",
		"neither":               "[[upstream]]\nname = \"a\"\n",
		"bad name":              "[[upstream]]\nname = \"A B\"\ncommand = \"x\"\n",
		"dup prefix":            "[[upstream]]\nname = \"a\"\ncommand = \"x\"\n[[upstream]]\nname = \"b\"\nprefix = \"a\"\ncommand = \"x\"\n",
		"url with userinfo":     "[[upstream]]\nname = \"a\"\nurl = \"https://u:p@example.com/mcp\"\n",
		"plain http remote":     "[[upstream]]\nname = \"a\"\nurl = \"http://example.com/mcp\"\n",
		"read-only and write":   "[[upstream]]\nname = \"a\"\ncommand = \"x\"\nread_only_tools = [\"t\"]\nwrite_tools = [\"t\"]\n",
		"read-only confirmed":   "[[upstream]]\nname = \"a\"\ncommand = \"x\"\nread_only_tools = [\"t\"]\nconfirm_tools = [\"t\"]\n",
		"bad env name":          "[[upstream]]\nname = \"a\"\ncommand = \"x\"\nenv = [\"A=B\"]\n",
		"env without command":   "[[upstream]]\nname = \"a\"\nurl = \"https://example.com/mcp\"\nenv = [\"PATH\"]\n",
		"bad duration":          "call_timeout = \"soon\"\n[[upstream]]\nname = \"a\"\ncommand = \"x\"\n",
		"wrong type":            "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\n",
		"not toml":              "{\"upstream\": []}",
		"unknown target kind":   "[[upstream]]\nname = \"a\"\ncommand = \"x\"\ntarget_kinds = { path = \"file\" }\n",
		"relative root":         "[[upstream]]\nname = \"a\"\ncommand = \"x\"\nroots = [\"srv\"]\n",
		"root not canonical":    "[[upstream]]\nname = \"a\"\ncommand = \"x\"\nroots = [\"/srv/../etc\"]\n",
		"target not a name":     "[[upstream]]\nname = \"a\"\ncommand = \"x\"\ntarget_args = { t = 5 }\n",
		"target list of int":    "[[upstream]]\nname = \"a\"\ncommand = \"x\"\ntarget_args = { t = [\"a\", 5] }\n",
		"empty target list":     "[[upstream]]\nname = \"a\"\ncommand = \"x\"\ntarget_args = { t = [] }\n",
		"empty target":          "[[upstream]]\nname = \"a\"\ncommand = \"x\"\ntarget_args = { t = \"\" }\n",
		"key in another case":   "[[upstream]]\nname = \"a\"\ncommand = \"x\"\ndeny_tools = [\"rm\"]\nDeny_Tools = []\n",
		"table in another case": "[[Upstream]]\nname = \"a\"\ncommand = \"x\"\n",
	}
	for name, doc := range cases {
		if _, err := gateway.ParseConfig([]byte(doc)); !errors.Is(err, gateway.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

func TestParseConfigBudget(t *testing.T) {
	big := strings.Repeat("# padding\n", 200_000)
	start := time.Now()
	if _, err := gateway.ParseConfig([]byte(big)); !errors.Is(err, gateway.ErrConfig) {
		t.Fatalf("a 2 MB file: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("refusing an oversized file took %s", d)
	}
}

// FuzzParseConfig: ParseConfig accepts a file only when every key in it is
// one of the configuration's (the toml tags of Config and Upstream,
// checked against a plain decoding of the same file), the upstreams it
// returns are the file's, in order, with the names, commands and URLs the
// file gives; adding an unknown key to an accepted file makes it refused;
// and every refusal wraps ErrConfig.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(exampleConfig))
	f.Add([]byte("[[upstream]]\nname = \"a\"\nurl = \"https://example.com/mcp\"\ncredential_file = \"/x\"\n"))
	f.Add([]byte("[[upstream]]\nname = \"a\"\ncommand = \"x\"\ndeny_tool = [\"rm\"]\n"))
	f.Add([]byte("[[upstream]]\nname = \"a\"\ncommand = \"x\"\n[upstream.target_args]\nmv = \"src\"\n"))
	topKeys, upstreamKeys := gateway.TomlNames(reflect.TypeFor[gateway.Config]()), gateway.TomlNames(reflect.TypeFor[gateway.Upstream]())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := gateway.ParseConfig(b)
		if err != nil {
			if !errors.Is(err, gateway.ErrConfig) {
				t.Fatalf("a refusal that does not wrap ErrConfig: %v", err)
			}
			return
		}
		var raw map[string]any
		if _, err := toml.Decode(string(b), &raw); err != nil {
			t.Fatalf("accepted a file that is not TOML: %v", err)
		}
		for k := range raw {
			if topKeys[k] == nil {
				t.Fatalf("accepted the unknown key %q", k)
			}
		}
		ups, _ := raw["upstream"].([]map[string]any)
		if len(ups) != len(c.Upstreams) {
			t.Fatalf("the file has %d upstreams, the configuration %d", len(ups), len(c.Upstreams))
		}
		for i, u := range ups {
			for k := range u {
				if upstreamKeys[k] == nil {
					t.Fatalf("upstream %d: accepted the unknown key %q", i, k)
				}
			}
			got := c.Upstreams[i]
			for k, v := range map[string]string{"name": got.Name, "command": got.Command, "url": got.URL} {
				if s, _ := u[k].(string); s != v {
					t.Fatalf("upstream %d: %s is %q in the file, %q in the configuration", i, k, s, v)
				}
			}
		}
		if _, err := gateway.ParseConfig(append(slices.Clone(b), "\nzz_not_a_key = true\n"...)); !errors.Is(err, gateway.ErrConfig) {
			t.Fatalf("an unknown key added to an accepted file: %v", err)
		}
	})
}

// TestDefaultKind: an argument named like a path is a path, like a URL a
// url, anything else a string.
func TestDefaultKind(t *testing.T) {
	for arg, want := range map[string]gateway.TargetKind{
		"path": gateway.KindPath, "paths": gateway.KindPath, "file_path": gateway.KindPath, "filePath": gateway.KindPath, "source": gateway.KindPath,
		"destination": gateway.KindPath, "target-dir": gateway.KindPath, "Directory": gateway.KindPath,
		"url": gateway.KindURL, "baseURL": gateway.KindURL, "resource_uri": gateway.KindURL, "urls": gateway.KindURL,
		"ticket_id": gateway.KindString, "name": gateway.KindString, "pathology": gateway.KindString, "profile": gateway.KindString, "": gateway.KindString,
	} {
		if got := gateway.DefaultKind(arg); got != want {
			t.Errorf("%q: %s, want %s", arg, got, want)
		}
	}
}

// TestResourcePrefixesMustBeCanonical: allow_resources and deny_resources
// take URI prefixes in canonical form; another spelling is refused at
// startup.
func TestResourcePrefixesMustBeCanonical(t *testing.T) {
	for _, c := range []struct {
		prefix string
		ok     bool
	}{{"file:///private/", true}, {"file:///a/../private/", false}, {"FILE:///x", false}, {"demo://Host/x", false}, {"urn:x:", true}, {"not a uri", false}} {
		u := gateway.Upstream{Name: "x", Command: "x", DenyResources: []string{c.prefix}}
		_, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Deps{Getenv: func(string) string { return "" }})
		if (err == nil) != c.ok {
			t.Errorf("%q: %v", c.prefix, err)
		}
	}
}
