package cli

import (
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// `help SERVER` prints to stdout, like `help`, so `bulwark help dns | less`
// works.
func TestHelpServerOnStdout(t *testing.T) {
	code, out, errOut := run(t, nil, "help", "dns")
	if code != 0 || !strings.Contains(out, "-hetzner-token-file") || errOut != "" {
		t.Fatalf("exit %d, stdout %d bytes, stderr %q", code, len(out), errOut)
	}
	// The help spells flags as the README does: --http.
	if !strings.Contains(out, "\n  --http ADDR\n") || strings.Contains(out, "\n  -http") {
		t.Fatalf("help dns spells flags differently from the README:\n%s", out)
	}
}

// Mistakes get one line that says what is wrong, not the whole usage.
func TestOneLineReasons(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dns", "-http", "notanaddr", "-dns-listen", "off", "-data-dir", "DIR"}, `-http "notanaddr" is not an address`},
		{[]string{"dns", "-http", "127.0.0.1:99999", "-dns-listen", "off", "-data-dir", "DIR"}, "is not an address"},
		{[]string{"dns", "-hetzner-token-file", "DIR/missing-token"}, "cannot read DIR/missing-token: no such file or directory"},
		{[]string{"dns", "-no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"completion", "tcsh"}, "use bash, zsh or fish"},
	} {
		dir := t.TempDir()
		args := make([]string, len(c.args))
		for i, a := range c.args {
			args[i] = strings.ReplaceAll(a, "DIR", dir)
		}
		code, _, errOut := run(t, map[string]string{}, args...)
		want := strings.ReplaceAll(c.want, "DIR", dir)
		if code != 2 || !strings.Contains(errOut, want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errOut)
		}
	}
}

// Started from a terminal, bulwark says in one line how to connect a
// client instead of waiting silently; from a pipe (a client) it says
// nothing.
func TestTerminalHint(t *testing.T) {
	old := isTerminal
	defer func() { isTerminal = old }()
	for _, tty := range []bool{true, false} {
		isTerminal = func(io.Reader) bool { return tty }
		_, _, errOut := run(t, map[string]string{}, "dns", "-dns-listen", "off", "-data-dir", t.TempDir())
		if got := strings.Contains(errOut, "waiting for an MCP client on stdin") && strings.Contains(errOut, "--http"); got != tty {
			t.Errorf("terminal %v: hint %v: %s", tty, got, errOut)
		}
	}
	// The real check: a pipe and /dev/null are not terminals.
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	if old(r) || old(devnull) || old(strings.NewReader("")) {
		t.Error("a pipe or /dev/null taken for a terminal")
	}
}

// The completion scripts offer every server and each server's flags; the
// bash one is run to prove it completes.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := run(t, nil, "completion", sh)
		if code != 0 {
			t.Fatalf("%s: %d %s", sh, code, errOut)
		}
		for _, s := range completionSubs() {
			if !strings.Contains(out, s.name) {
				t.Errorf("%s: no %s %s", sh, s.parent, s.name)
			}
			for _, f := range s.flags {
				if !strings.Contains(out, f.Name) {
					t.Errorf("%s: no %s %s -%s", sh, s.parent, s.name, f.Name)
				}
			}
		}
		for _, s := range completionServers() {
			if !strings.Contains(out, s.name) {
				t.Errorf("%s: no %s", sh, s.name)
			}
			for _, f := range s.flags {
				if !strings.Contains(out, f.Name) {
					t.Errorf("%s: no -%s", sh, f.Name)
				}
			}
		}
		if path, err := exec.LookPath(sh); err == nil {
			script := filepath.Join(t.TempDir(), "c")
			os.WriteFile(script, []byte(out), 0o600)
			if b, err := exec.Command(path, "-n", script).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v %s", sh, err, b)
			}
		}
	}
	if _, err := exec.LookPath("bash"); err != nil {
		return
	}
	_, script, _ := run(t, nil, "completion", "bash")
	for line, want := range map[string]string{
		"bulwark d":                  "dns doctor",
		"bulwark dns -data":          "-data-dir",
		"bulwark rustpad -ur":        "-url",
		"bulwark help ru":            "rustpad",
		"bulwark completion f":       "fish",
		"bulwark a":                  "authz",
		"bulwark authz s":            "schema",
		"bulwark authz check -pol":   "-policy",
		"bulwark gateway app":        "approve",
		"bulwark gateway approve -y": "-yes",
		"bulwark gateway -require":   "-require-approval",
	} {
		words := strings.Fields(line)
		cmd := exec.CommandContext(context.Background(), "bash", "-c", script+`
COMP_WORDS=(`+line+`); COMP_CWORD=`+itoa(len(words)-1)+`; _bulwark; echo "${COMPREPLY[*]}"`)
		b, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%q completes to %q (%v), want %q", line, b, err, want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// Help shows a boolean flag without an argument (its usage names a command
// in quotes, not in the backquotes that name an argument), and the API-key
// file's line format with its groups.
func TestHelpFlagTexts(t *testing.T) {
	_, out, _ := run(t, nil, "help", "gateway")
	if !strings.Contains(out, "  --require-approval\n") || strings.Contains(out, "--require-approval bulwark") {
		t.Errorf("help gateway shows --require-approval with an argument:\n%s", out)
	}
	if !strings.Contains(out, `"<sha256-hex> <plan> [id] [groups=a,b]"`) {
		t.Errorf("help gateway: --api-keys-file's format lacks the groups:\n%s", out)
	}
	// No boolean flag of any command names an argument in backquotes.
	var all []*flag.Flag
	for _, s := range completionServers() {
		all = append(all, s.flags...)
	}
	for _, s := range completionSubs() {
		all = append(all, s.flags...)
	}
	for _, f := range all {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if name, _ := flag.UnquoteUsage(f); name != "" {
				t.Errorf("boolean flag -%s shows an argument %q", f.Name, name)
			}
		}
	}
}
