package gateway_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// schemaFixture is a gateway in front of the fake with mcpupstream.SchemasVar
// set at start (or, when mutable, reachable by mutate("schemas")).
func schemaFixture(t *testing.T, vars map[string]string) *fixture {
	t.Helper()
	getenv, u := withEnv(vars)
	u.ReadOnlyTools = slices.Concat(readOnlyTools, slices.Collect(maps.Keys(mcpupstream.RefusedSchemas)), []string{"draft07", "mutate", "fresh"})
	return newFixture(t, options{getenv: getenv, cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
}

// checkSchemaTools: the fake's tools whose schemas the kernel cannot
// register are not listed and each is logged by name; the draft-07 tool
// is served, its arguments checked against the draft-07 keywords, and the
// fake's ordinary tools answer.
func checkSchemaTools(t *testing.T, f *fixture, names []string) {
	t.Helper()
	var skipped []string
	for _, line := range strings.Split(f.log.String(), "\n") {
		if strings.Contains(line, "upstream tool not exposed") {
			skipped = append(skipped, line)
		}
	}
	for name := range mcpupstream.RefusedSchemas {
		if slices.Contains(names, "fake."+name) {
			t.Errorf("fake.%s is listed; its schema cannot be registered", name)
		}
		if !slices.ContainsFunc(skipped, func(l string) bool { return strings.Contains(l, name) }) {
			t.Errorf("%s: no log line says it was left out:\n%s", name, strings.Join(skipped, "\n"))
		}
	}
	if !slices.Contains(names, "fake.draft07") {
		t.Fatalf("fake.draft07 is not listed: %v\nlog:\n%s", names, f.log.String())
	}
	if res := f.sess.Call(t, "fake.echo", map[string]any{"text": "still here"}); res.IsError || !strings.Contains(text(res), "still here") {
		t.Fatalf("fake.echo: %s", text(res))
	}
	if res := f.sess.Call(t, "fake.draft07", map[string]any{"a": "x", "b": "y", "pair": []any{1, "s"}}); res.IsError || !strings.Contains(text(res), "ran") {
		t.Fatalf("fake.draft07 with fitting arguments: %s", text(res))
	}
	for _, args := range []map[string]any{{"a": "x"}, {"pair": []any{1, "s", "extra"}}} {
		wantError(t, f.sess.Call(t, "fake.draft07", args), "invalid_argument")
	}
}

// An upstream whose tools use schema keywords the kernel cannot register,
// beside ordinary tools, does not stop the gateway: it starts, serves the
// ordinary tools, and logs each one it left out.
func TestUpstreamSchemasTheKernelRefusesAreSkippedAtStart(t *testing.T) {
	f := schemaFixture(t, map[string]string{mcpupstream.SchemasVar: "1"})
	checkSchemaTools(t, f, toolNames(t, f))
}

// The same tools added mid-session are skipped at the relist, and the
// tools listed beside them are added — not some, up to the first bad one.
func TestUpstreamSchemasTheKernelRefusesAreSkippedAtRelist(t *testing.T) {
	f := schemaFixture(t, map[string]string{mcpupstream.MutableVar: "1"})
	if res := f.sess.Call(t, "fake.mutate", map[string]any{"change": "schemas"}); res.IsError {
		t.Fatalf("mutate: %s", text(res))
	}
	names := waitFor(t, f, "the relisted tools", func(n []string) bool {
		return slices.Contains(n, "fake.fresh") && slices.Contains(n, "fake.draft07")
	})
	checkSchemaTools(t, f, names)
	if strings.Contains(f.log.String(), "could not be updated") {
		t.Fatalf("the relist failed:\n%s", f.log.String())
	}
}
