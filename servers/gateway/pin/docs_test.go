package pin

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every test docs/gateway-pinning.md names as evidence exists, so the
// page cannot point at a test that was renamed or removed.
func TestDocsNameExistingTests(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/gateway-pinning.md")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, glob := range []string{"*_test.go", "../*_test.go", "../../../internal/cli/gateway*_test.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
	}
	names := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9]+)`").FindAllStringSubmatch(string(doc), -1)
	if len(names) < 10 {
		t.Fatalf("only %d tests named in the doc", len(names))
	}
	for _, m := range names {
		if !strings.Contains(src.String(), "func "+m[1]+"(") {
			t.Errorf("docs/gateway-pinning.md names %s, which does not exist", m[1])
		}
	}
	for _, path := range []string{"internal/cli/testdata/gateway_approve.txtar"} {
		if !strings.Contains(string(doc), path) {
			t.Errorf("the doc does not name %s", path)
		}
		if _, err := os.Stat("../../../" + path); err != nil {
			t.Error(err)
		}
	}
}
