package cli

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/listen"
)

// compose.yaml's bulwark command parses as `bulwark dns` flags, so the
// example cannot drift from the binary.
func TestComposeCommandParses(t *testing.T) {
	b, err := os.ReadFile("../../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.TrimSpace(line) == "command:" && in:
			args = []string{}
		case line == "  bulwark:":
			in = true
		case args != nil && strings.HasPrefix(line, "      - "):
			args = append(args, strings.TrimPrefix(line, "      - "))
		case args != nil && len(args) > 0:
			in = false
		}
		if !in && len(args) > 0 {
			break
		}
	}
	if len(args) < 2 || args[0] != "dns" {
		t.Fatalf("no bulwark dns command found: %v", args)
	}
	c, _ := lookupCommand(args[0])
	fs := flag.NewFlagSet("compose", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.setup(fs, Env{Getenv: func(string) string { return "" }})
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		t.Fatalf("compose.yaml's command %v: %v", args, err)
	}
	var s serving
	s.http, s.auth = fs.Lookup("http").Value.String(), fs.Lookup("auth").Value.String()
	if listen.Loopback(s.http) || s.auth == "none" {
		t.Errorf("the compose replicas listen on %s with -auth %s", s.http, s.auth)
	}
}
