package untrusted

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TerminalLine returns s safe to print on one line of a terminal: every
// control character (escape sequences lose their power: ESC is shown as
// \x1b, so a name cannot clear the screen, set the clipboard or hide the
// lines that follow), every character a terminal hides or reorders
// (invisible and bidirectional characters, anything not printable) are
// written as Go escapes; printable text is kept as it is. Text
// from an upstream or a client goes through it, or TerminalText, before it
// is printed to a terminal.
func TerminalLine(s string) string {
	if terminalSafe(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case printable(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	return b.String()
}

// TerminalText is TerminalLine of each line of s: the newlines between lines
// are kept, every other character is treated as TerminalLine treats it.
func TerminalText(s string) string {
	if terminalSafe(strings.ReplaceAll(s, "\n", "")) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = TerminalLine(l)
	}
	return strings.Join(lines, "\n")
}

// printable reports whether a terminal shows r as itself: a printable
// character that CleanString would neither remove nor mark.
func printable(r rune) bool {
	return (unicode.IsPrint(r) || r == ' ') && classify(r) == keep
}

// terminalSafe reports whether s is printable ASCII.
func terminalSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
