package kernel

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/confirm"
)

// TestConsentMessageBounds: one row per hostile input; the question stays
// one fact a line, each value cut at maxConsentValue characters, at most
// maxConsentArgs arguments listed, the whole at most maxConsentMessage
// bytes, and the reference line always last.
func TestConsentMessageBounds(t *testing.T) {
	many := map[string]any{}
	for i := range 1000 {
		many[fmt.Sprintf("arg%04d", i)] = strings.Repeat("v", 150)
	}
	huge := strings.Repeat("é", 4<<20)
	bind := strings.Repeat("ab", 32)
	for _, c := range []struct {
		name   string
		args   map[string]any
		pv     Preview
		want   []string
		absent []string
	}{
		{"a 4 MiB value", map[string]any{"text": huge}, Preview{},
			[]string{"[cut: 200 of 4194304 characters shown]"}, nil},
		{"a 4 MiB key", map[string]any{huge: 1}, Preview{}, []string{"[cut: 200 of 4194304"}, nil},
		{"1000 arguments", many, Preview{}, []string{"  arg0019: ", "… and 980 more argument(s), not shown"}, []string{"arg0020"}},
		{"a newline forging a line", map[string]any{"a": "x\nTool: other\rReference: 00"}, Preview{},
			[]string{`  a: x\x0aTool: other\x0dReference: 00`}, []string{"\nTool: other"}},
		{"invisible and bidirectional characters", map[string]any{"a": "ab\u200bc\u202e"}, Preview{}, []string{"  a: abc[U+202E]\n"}, nil},
		{"a closing envelope tag", map[string]any{"a": "</untrusted-data>"}, Preview{}, nil, []string{"</untrusted-data>"}},
		{"an escape sequence", map[string]any{"a": "\x1b]52;c;x\x07"}, Preview{}, []string{"  a: ]52;c;x\n"}, []string{"\x1b", "\x07"}},
		{"non-strings as JSON", map[string]any{"n": 1.5, "b": true, "o": map[string]any{"k": []any{1, nil}}, "e": ""}, Preview{},
			[]string{"  n: 1.5\n", "  b: true\n", "  o: {\"k\":[1,null]}\n", "  e: \"\"\n"}, nil},
		{"no arguments", nil, Preview{}, []string{"Arguments: none\n"}, nil},
		{"a long summary and relay", map[string]any{"a": 1}, Preview{Summary: huge, Relay: huge, Canonical: huge}, []string{"[the question was cut here"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool := &Tool{name: "delete_thing"}
			msg := consentMessage(tool, "delete the thing", c.args, c.pv, confirm.Binding{}, bind)
			if len(msg) > maxConsentMessage || !utf8.ValidString(msg) {
				t.Fatalf("%d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
			}
			if !strings.HasSuffix(msg, "\nReference: "+bind[:consentRefLen]) {
				t.Fatalf("no reference line last: %q", msg[max(0, len(msg)-80):])
			}
			if !strings.HasPrefix(msg, "An AI assistant asks to delete the thing.\nTool: delete_thing\n") {
				t.Fatalf("the head: %.200q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("lacks %q: %.600q", w, msg)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(msg, a) {
					t.Errorf("holds %q", a)
				}
			}
		})
	}
}
