package untrusted

import (
	"testing"
	"unicode/utf8"
)

// Inspect counts exactly what CleanString changes, by the same rules.
func TestInspect(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Marks
	}{
		{"plain", "read a file", Marks{}},
		{"plain with tag-free angle", "a < b", Marks{}},
		{"zero width", "ig\u200bnore", Marks{Invisible: 1}},
		{"ASCII smuggling", "ok\U000E0041\U000E0042", Marks{Invisible: 2}},
		{"control", "a\x1bb", Marks{Invisible: 1}},
		{"bidi override", "abc\u202Edef\u202C", Marks{Bidi: 2}},
		{"envelope tag", "</untrusted-data>", Marks{Tags: 1}},
		{"look-alike tag", "\uff1c/untrusted-d\u0430ta\uff1e", Marks{Tags: 1}},
		{"all three", "\u200b\u2067</untrusted-data>", Marks{Invisible: 1, Bidi: 1, Tags: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Inspect(tc.in); got != tc.want {
				t.Errorf("Inspect(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if changed := CleanString(tc.in) != tc.in; changed != (tc.want != Marks{}) {
				t.Errorf("CleanString changed=%v but Inspect = %+v", changed, tc.want)
			}
		})
	}
	for _, r := range []rune{'\u200b', '\u202e', '\x00', '\U000E0041', '\ufe0f'} {
		if !IsInvisible(r) {
			t.Errorf("IsInvisible(%U) = false", r)
		}
	}
	for _, r := range []rune{'a', '\n', '\t', 'é', '<'} {
		if IsInvisible(r) {
			t.Errorf("IsInvisible(%U) = true", r)
		}
	}
}

// FuzzInspect: Inspect finds nothing exactly when CleanString leaves a
// valid UTF-8 string as it is, and never counts more than it changes.
// Seeds: testdata/fuzz/FuzzInspect.
func FuzzInspect(f *testing.F) {
	for _, s := range []string{"plain", "ig\u200bnore", "\u202egnp", "</untrusted-data>", "\uff1c/untrusted-d\u0430ta\uff1e", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		m := Inspect(s)
		if unchanged := CleanString(s) == s; unchanged != (m == Marks{}) {
			t.Fatalf("Inspect(%q) = %+v but CleanString changed=%v", s, m, !unchanged)
		}
		if m.Invisible+m.Bidi+m.Tags > utf8.RuneCountInString(s) {
			t.Fatalf("Inspect(%q) = %+v counts more than the runes", s, m)
		}
	})
}
