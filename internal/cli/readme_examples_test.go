package cli

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
)

// readmeBlocks returns the README's fenced code blocks of a language.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestREADMEFirstExample runs the README's first example as written: the
// tool calls it lists, against `bulwark dns`, then the dig query, whose
// answer must be the one the README shows.
func TestREADMEFirstExample(t *testing.T) {
	blocks := readmeBlocks(t, "console")
	if len(blocks) == 0 {
		t.Fatal("README.md has no console example")
	}
	cs, _, stderr := session(t, map[string]string{}, "-data-dir", t.TempDir(), "-dns-listen", "127.0.0.1:0")
	lines := strings.Split(strings.TrimSpace(blocks[0]), "\n")
	var calls int
	var question []string
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "#   "):
			name, args, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), " ")
			var m map[string]any
			if err := json.Unmarshal([]byte(args), &m); err != nil {
				t.Fatalf("README call %q: %v", line, err)
			}
			call(t, cs, name, m) // fails the test on a tool error (a missing "mode", say)
			calls++
		case strings.HasPrefix(line, "$ dig "):
			question = strings.Fields(line)[5:7] // www.example.com A
		}
	}
	if calls == 0 || question == nil {
		t.Fatalf("the first example lists no tool calls or no dig query:\n%s", blocks[0])
	}
	m := new(mdns.Msg)
	m.SetQuestion(mdns.Fqdn(question[0]), mdns.StringToType[question[1]])
	resp, _, err := new(mdns.Client).Exchange(m, waitFor(t, stderr, "DNS responder listening"))
	if err != nil || len(resp.Answer) != 1 {
		t.Fatalf("dig: %v %v", resp, err)
	}
	if got, want := strings.Fields(resp.Answer[0].String()), strings.Fields(lines[len(lines)-1]); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("answer %q, the README shows %q", got, want)
	}
}

// TestREADMECommandsParse: every bulwark command line in the README's sh
// blocks names a real server and flags it accepts; every JSON block parses.
func TestREADMECommandsParse(t *testing.T) {
	var n int
	blocks, jsonBlocks := readmeBlocks(t, "sh"), readmeBlocks(t, "json")
	// Flags that read a file (-tsig-key-file) read it while parsing: the
	// files the README names are made, empty, in a directory of the test's.
	t.Chdir(t.TempDir())
	for _, block := range blocks {
		for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
			line, _, _ = strings.Cut(line, "#")
			f := strings.Fields(line)
			switch {
			case len(f) > 1 && f[0] == "bulwark":
				f = f[1:]
			case len(f) > 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/bulwark":
				f = f[3:]
			default:
				continue
			}
			var cmd *command
			for _, c := range commands() {
				if c.name == f[0] {
					cmd = &c
				}
			}
			if cmd == nil {
				t.Errorf("README: %q names no server", line)
				continue
			}
			for i := 1; i+1 < len(f); i++ {
				if strings.HasSuffix(f[i], "-file") && !strings.Contains(f[i+1], "/") {
					if err := os.WriteFile(f[i+1], nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			fs := flag.NewFlagSet(f[0], flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			cmd.setup(fs, Env{Getenv: func(string) string { return "" }})
			if err := fs.Parse(f[1:]); err != nil {
				t.Errorf("README: %q: %v", line, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no bulwark command found in the README's sh blocks")
	}
	for _, block := range jsonBlocks {
		if !json.Valid([]byte(block)) {
			t.Errorf("README JSON block does not parse:\n%s", block)
		}
	}
}
