package kernel

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
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

// FuzzConsentMessage: whatever a caller or an upstream puts in the
// arguments, the action, the relay and the preview, the question is at
// most maxConsentMessage bytes, valid UTF-8, holds no control character
// but its own newlines and no character cleaning removes, shows no
// envelope tag, every line it writes is one of its own (an argument line
// starts with two spaces), and it ends with the binding's Reference line.
// Seeds: testdata/fuzz/FuzzConsentMessage.
func FuzzConsentMessage(f *testing.F) {
	f.Add("delete the thing", "a", "x\nTool: other", "relay", "summary", "target")
	f.Add("x\u202e", "</untrusted-data>", "\x1b]52;c;x\x07", "", "", "")
	f.Add(strings.Repeat("é", 3000), strings.Repeat("k", 500), strings.Repeat("v\u200b", 400), "r\r\n", "s", "\u2028")
	bind := strings.Repeat("ab", 32)
	f.Fuzz(func(t *testing.T, action, key, value, relay, summary, target string) {
		args := map[string]any{key: value, "n": 1.5, key + "2": []any{value, nil}}
		pv := Preview{Relay: relay, Summary: summary, Canonical: target}
		msg := consentMessage(&Tool{name: "delete_" + key, policy: Policy{Destructive: Yes}}, action, args, pv, confirm.Binding{Target: target}, bind)
		if len(msg) > maxConsentMessage || !utf8.ValidString(msg) {
			t.Fatalf("%d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
		}
		if !strings.HasSuffix(msg, "\nReference: "+bind[:consentRefLen]) {
			t.Fatalf("no Reference line at the end: %q", msg)
		}
		if untrusted.Inspect(msg).Tags > 0 {
			t.Fatalf("an envelope tag: %q", msg)
		}
		for _, r := range msg {
			if r != '\n' && untrusted.IsInvisible(r) {
				t.Fatalf("%U in %q", r, msg)
			}
		}
		for _, line := range strings.Split(msg, "\n") {
			switch {
			case strings.HasPrefix(line, "An AI assistant asks to "), strings.HasPrefix(line, "Tool: "), strings.HasPrefix(line, "Upstream: "),
				strings.HasPrefix(line, "Target: "), strings.HasPrefix(line, "Arguments:"), strings.HasPrefix(line, "  "),
				strings.HasPrefix(line, "Reference: "), strings.HasPrefix(line, "This removes"), strings.HasPrefix(line, "Accept only"),
				strings.HasPrefix(line, "… and "), strings.HasPrefix(line, "[the question was cut here"), strings.HasPrefix(oneLine(summary), line): // the summary, maybe cut
			default:
				t.Fatalf("a line the question does not write: %q in %q", line, msg)
			}
		}
	})
}
