package kernel_test

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFastPathRulesDocumented: docs/architecture.md ("Which requests the
// fast paths answer") names each function that holds a rule of the fast
// paths, with its file, and the code marks exactly those functions: a rule
// added, moved or removed in the code without the prose (or the other way
// round) fails here.
func TestFastPathRulesDocumented(t *testing.T) {
	fset := gotoken.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	for _, f := range pkgs["kernel"].Files {
		file := filepath.Base(fset.File(f.Pos()).Name())
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil &&
				strings.Contains(strings.Join(strings.Fields(fd.Doc.Text()), " "), "rule of the fast paths (docs/architecture.md)") {
				code = append(code, fd.Name.Name+" ("+file+")")
			}
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## Which requests the fast paths answer")
	if start < 0 {
		t.Fatal("docs/architecture.md has no section on the fast paths' rules")
	}
	if end := strings.Index(text[start+3:], "\n## "); end >= 0 {
		text = text[:start+3+end]
	}
	var prose []string
	for _, m := range regexp.MustCompile(`(?m)^- (\w+ \(\w+\.go\)):`).FindAllStringSubmatch(text[start:], -1) {
		prose = append(prose, m[1])
	}
	slices.Sort(code)
	slices.Sort(prose)
	if len(code) == 0 || !slices.Equal(code, prose) {
		t.Errorf("the fast paths' rules in the code and in docs/architecture.md differ:\ncode: %v\ndocs: %v", code, prose)
	}
}

// TestNoMissingDesignDoc: no Go file in the repository cites a design
// document the repository does not contain (the map of the pipeline is
// kernel/doc.go).
func TestNoMissingDesignDoc(t *testing.T) {
	root := filepath.Join("..")
	name := "design" + ".md" // spelled apart: this file does not cite it
	if _, err := os.Stat(filepath.Join(root, name)); err == nil {
		t.Skip("the repository has one")
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), name) {
			t.Errorf("%s cites a design document the repository does not contain", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
