package untrusted

import (
	"strings"
	"testing"
)

// Text bound for a terminal loses every control and hidden character: a
// hostile tool name cannot clear the screen, write the clipboard (OSC 52),
// reorder what follows or hide it.
func TestTerminalLine(t *testing.T) {
	for in, want := range map[string]string{
		"read_file":                   "read_file",
		"x\x1b[2J\x1b]52;c;aGk=\x07y": `x\x1b[2J\x1b]52;c;aGk=\x07y`,
		"a\nb\rc\td":                  `a\x0ab\x0dc\x09d`,
		"abc\u202edcba\u200b":         `abc\u202edcba\u200b`,
		"tag\U000E0041":               `tag\U000e0041`,
		`back\slash`:                  `back\slash`,
		"héllo wörld":                 "héllo wörld",
		"\x9b31m":                     `\x9b31m`,
		string([]byte{0xff, 'a'}):     `\xffa`,
	} {
		if got := TerminalLine(in); got != want {
			t.Errorf("TerminalLine(%q) = %q, want %q", in, got, want)
		}
	}
	if got := TerminalText("one\x1b[1A\ntwo\n"); got != `one\x1b[1A`+"\ntwo\n" {
		t.Errorf("TerminalText = %q", got)
	}
}

func FuzzTerminalLine(f *testing.F) {
	f.Add("x\x1b[2J\x1b]52;c;aGk=\x07y")
	f.Add("abc\u202edcba")
	f.Fuzz(func(t *testing.T, s string) {
		out := TerminalLine(s)
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || classify(r) != keep {
				t.Fatalf("TerminalLine(%q) = %q holds %U", s, out, r)
			}
		}
		if strings.ContainsRune(TerminalText(s), '\x1b') {
			t.Fatalf("TerminalText(%q) holds ESC", s)
		}
	})
}
