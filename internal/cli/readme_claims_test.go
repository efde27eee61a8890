package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEHTTPExampleWaitsForTheServer: the 30-second example starts the
// server in the background, so it polls /healthz (answered once the server
// listens) before its curl call; curl alone ran before the server listened
// and exited 7.
func TestREADMEHTTPExampleWaitsForTheServer(t *testing.T) {
	for _, block := range readmeBlocks(t, "sh") {
		lines := strings.Split(block, "\n")
		for i, line := range lines {
			if !strings.HasSuffix(strings.TrimSpace(line), "&") || !strings.Contains(line, "--http :8080") {
				continue
			}
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "until curl -sf http://127.0.0.1:8080/healthz") {
				t.Fatalf("the background server is not waited for:\n%s", block)
			}
			return
		}
	}
	t.Fatal("no background --http example in the README")
}

// TestREADMEFuzzCommandsNameOneTarget: each `-fuzz PATTERN ./pkg` in the
// README matches exactly one Fuzz function of that package (go test
// refuses a pattern that matches several).
func TestREADMEFuzzCommandsNameOneTarget(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := regexp.MustCompile(`-fuzz '?([^' ]+)'? (\./\S+?)\x60`).FindAllStringSubmatch(string(b), -1)
	if len(cmds) == 0 {
		t.Fatal("no fuzz command in the README")
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	for _, c := range cmds {
		re, err := regexp.Compile(c[1])
		if err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join("../..", c[2], "*_test.go"))
		var matched []string
		for _, f := range files {
			src, _ := os.ReadFile(f)
			for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
				if re.MatchString(m[1]) {
					matched = append(matched, m[1])
				}
			}
		}
		if len(matched) != 1 {
			t.Errorf("-fuzz %s %s matches %v, want exactly one target", c[1], c[2], matched)
		}
	}
}

// TestREADMEToolTablesAreAboveDevelopment: the Development section points
// to "the tool tables above".
func TestREADMEToolTablesAreAboveDevelopment(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	dev, tables := strings.Index(s, "the tool tables above"), strings.LastIndex(s, "<!-- END tools:")
	if dev < 0 || tables < 0 || tables > dev {
		t.Fatalf("the tool tables (at %d) are not above the sentence pointing to them (at %d)", tables, dev)
	}
}
