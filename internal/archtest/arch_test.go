// Package archtest enforces the shape of the tree (CONTRIBUTING.md): servers import
// kernel packages; the kernel never imports a server; servers never import
// each other (nor each other's internals); servers/dns never imports a
// provider; rustpad's ot knows nothing of its session (it borrows only
// kernel/untrusted's lone-surrogate scan); cmd imports only
// internal/cli.
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/bulwarkmcp/bulwark/"

// imports maps each package directory (relative to the module root) to the
// module-internal packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(p, module) {
				out[rel] = append(out[rel], strings.TrimPrefix(p, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// server returns the server a package belongs to ("dns" for
// servers/dns/hetzner), or "".
func server(pkg string) string {
	if !under(pkg, "servers") {
		return ""
	}
	parts := strings.Split(pkg, "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

func TestDependenciesPointOneWay(t *testing.T) {
	graph := imports(t)
	if len(graph) == 0 {
		t.Fatal("no packages found")
	}
	for pkg, deps := range graph {
		for _, dep := range deps {
			if why := violation(pkg, dep); why != "" {
				t.Errorf("%s imports %s: %s", pkg, dep, why)
			}
		}
	}
}

// violation says which rule an import of dep by pkg breaks, or "".
func violation(pkg, dep string) string {
	switch {
	case under(pkg, "kernel") && !under(dep, "kernel"):
		return "the kernel imports only the kernel"
	case under(pkg, "kernel") && under(dep, "kernel/mcptest") && !under(pkg, "kernel/mcptest"):
		return "the test harness is for tests, not for the kernel itself"
	case under(pkg, "cmd") && !under(dep, "internal/cli"):
		return "cmd imports only internal/cli (and its own rooms, such as bootenv)"
	case server(pkg) != "" && server(dep) != "" && server(pkg) != server(dep):
		return "servers never import each other, nor each other's internals"
	case server(pkg) != "" && under(dep, "internal"):
		return "servers import only the kernel and themselves"
	case pkg == "servers/dns" && strings.HasPrefix(dep, "servers/dns/"):
		return "internal/cli picks the provider; servers/dns never imports one"
	case under(pkg, "servers/rustpad/ot") && !under(dep, "servers/rustpad/ot") && dep != "kernel/untrusted":
		// The one kernel package it borrows: kernel/untrusted's
		// lone-surrogate scan, the same rule the kernel applies to tool
		// arguments (one scanner, not two kept equal by a test).
		return "ot knows nothing of the session or the tools"
	case under(pkg, "servers/rustpad/session") && under(dep, "servers/rustpad") && !under(dep, "servers/rustpad/ot") && !under(dep, "servers/rustpad/session"):
		return "the session knows nothing of the tools"
	case under(pkg, "internal/fake") && (under(dep, "servers") || under(dep, "kernel")) && dep != "servers/rustpad/ot":
		// The one exception: the Rustpad peer transforms with ot, a pure
		// algorithm pinned by the reference's own test vectors (its
		// ValidText borrows kernel/untrusted's lone-surrogate scan).
		return "fakes follow the references, not our code"
	}
	return ""
}

// TestRulesCatch feeds each rule an import that breaks it, so a rule that
// stops matching fails here rather than passing silently over the tree.
func TestRulesCatch(t *testing.T) {
	bad := [][2]string{
		{"kernel", "servers/dns"},
		{"kernel/identity", "internal/cli"},
		{"kernel", "kernel/mcptest"},
		{"cmd/bulwark", "servers/dns"},
		{"cmd/bulwark", "kernel"},
		{"cmd/bulwark", "internal/fake/hetznerapi"},
		{"cmd/bulwark", "internal/clifake"},
		{"servers/vdb", "servers/dns/localzone"},
		{"servers/gateway", "servers/rustpad/session"},
		{"servers/dns", "internal/fake/hetznerapi"},
		{"servers/dns", "servers/dns/hetzner"},
		{"servers/rustpad/ot", "servers/rustpad/session"},
		{"servers/rustpad/ot", "kernel"},
		{"servers/rustpad/session", "servers/rustpad"},
		{"internal/fake/vdbapi", "kernel/untrusted"},
	}
	for _, c := range bad {
		if violation(c[0], c[1]) == "" {
			t.Errorf("%s importing %s passes the rules", c[0], c[1])
		}
	}
	good := [][2]string{
		{"cmd/bulwark", "internal/cli"},
		{"cmd/bulwark", "internal/cli/bootenv"},
		{"internal/cli", "servers/dns/hetzner"},
		{"servers/dns/hetzner", "servers/dns"},
		{"servers/rustpad", "servers/rustpad/session"},
		{"kernel/mcptest", "kernel"},
		{"internal/fake/rustpad", "servers/rustpad/ot"},
		{"servers/rustpad/ot", "kernel/untrusted"},
	}
	for _, c := range good {
		if why := violation(c[0], c[1]); why != "" {
			t.Errorf("%s importing %s refused: %s", c[0], c[1], why)
		}
	}
}

func TestMainIsTiny(t *testing.T) {
	b, err := os.ReadFile("../../cmd/bulwark/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 40 {
		t.Errorf("cmd/bulwark/main.go has %d lines: keep it to the signal context, cli.Run and the exit code", n)
	}
}
