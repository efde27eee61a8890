package rustpad

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSetOp: the operation set_document sends turns the old text into the
// new one, on a base of exactly the old text's length.
func FuzzSetOp(f *testing.F) {
	f.Add("hello world", "hello there world")
	f.Add("aaa old bbb", "aaa new bbb")
	f.Add("🎉😍", "😍🎉")
	f.Add("", "x")
	f.Add("abc", "")
	f.Fuzz(func(t *testing.T, old, text string) {
		if !utf8.ValidString(old) || !utf8.ValidString(text) {
			return
		}
		op := setOp(old, text)
		if err := op.Err(); err != nil {
			t.Fatal(err)
		}
		if op.BaseLen() != utf8.RuneCountInString(old) || op.TargetLen() != utf8.RuneCountInString(text) {
			t.Fatalf("lengths %d->%d for %q->%q", op.BaseLen(), op.TargetLen(), old, text)
		}
		got, err := op.Apply(old)
		if err != nil || got != text {
			t.Fatalf("%s on %q gave %q, %v; want %q", op, old, got, err, text)
		}
	})
}

// FuzzReplaceOp: the operation replace_in_document sends does what
// strings.Replace does, and the count is strings.Count.
func FuzzReplaceOp(f *testing.F) {
	f.Add("one two one", "one", "1", true)
	f.Add("aaaa", "aa", "a", true)
	f.Add("🎉 x 🎉", "🎉", "", false)
	f.Add("abc", "abcd", "x", true)
	f.Fuzz(func(t *testing.T, text, search, replace string, all bool) {
		if search == "" || !utf8.ValidString(text) || !utf8.ValidString(search) || !utf8.ValidString(replace) {
			return
		}
		op, count := replaceOp(text, search, replace, all)
		if want := strings.Count(text, search); count != want {
			t.Fatalf("count %d, want %d", count, want)
		}
		n := 1
		if all {
			n = -1
		}
		got, err := op.Apply(text)
		if want := strings.Replace(text, search, replace, n); err != nil || got != want {
			t.Fatalf("%s on %q gave %q, %v; want %q", op, text, got, err, want)
		}
	})
}

// FuzzParseStats: hostile /api/stats bodies never panic, and what is
// accepted has the three fields.
func FuzzParseStats(f *testing.F) {
	f.Add([]byte(`{"start_time":1700000000,"num_documents":3,"database_size":0}`))
	f.Add([]byte(`{"start_time":-1,"num_documents":1,"database_size":0}`))
	f.Add([]byte(`{"start_time":1.5}`))
	f.Add([]byte(`{"start_time":18446744073709551615,"num_documents":0,"database_size":0,"x":null}`))
	f.Add([]byte(`[1,2,3]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		st, err := parseStats(body)
		if err != nil {
			return
		}
		if !strings.Contains(string(body), "start_time") {
			t.Fatalf("accepted %q as %+v", body, st)
		}
	})
}
