// Package archtest enforces the shape of the tree (design.md): servers import
// kernel packages; the kernel never imports a server; servers never import
// each other; servers/dns never imports a provider; rustpad's ot knows
// nothing of its session.
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
			switch {
			case under(pkg, "kernel") && !under(dep, "kernel"):
				t.Errorf("%s imports %s: the kernel imports only the kernel", pkg, dep)
			case server(pkg) != "" && server(dep) != "" && server(pkg) != server(dep):
				t.Errorf("%s imports %s: servers never import each other", pkg, dep)
			case server(pkg) != "" && under(dep, "internal"):
				t.Errorf("%s imports %s: servers import only the kernel and themselves", pkg, dep)
			case pkg == "servers/dns" && under(dep, "servers/dns/"):
				t.Errorf("servers/dns imports the provider %s: internal/cli picks the provider", dep)
			case under(pkg, "servers/rustpad/ot") && !under(dep, "servers/rustpad/ot"):
				t.Errorf("%s imports %s: ot knows nothing of the session or the tools", pkg, dep)
			case under(pkg, "servers/rustpad/session") && under(dep, "servers/rustpad") && !under(dep, "servers/rustpad/ot") && !under(dep, "servers/rustpad/session"):
				t.Errorf("%s imports %s: the session knows nothing of the tools", pkg, dep)
			case under(pkg, "internal/fake") && (under(dep, "servers") || under(dep, "kernel")) && dep != "servers/rustpad/ot":
				// The one exception: the Rustpad peer transforms with ot, a pure
				// algorithm pinned by the reference's own test vectors.
				t.Errorf("%s imports %s: fakes follow the references, not our code", pkg, dep)
			}
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
