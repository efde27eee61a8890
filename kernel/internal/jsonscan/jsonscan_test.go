package jsonscan

import (
	"encoding/json"
	"errors"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValid(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{`0`, true}, {`-0.5e+10`, true}, {`1E3`, true}, {` {"a" : [1, "x", true, false, null, {}] } `, true},
		{`"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"`, true}, {`[]`, true},
		{``, false}, {`01`, false}, {`1.`, false}, {`.5`, false}, {`1e`, false}, {`-`, false}, {`+1`, false},
		{`tru`, false}, {`nul`, false}, {`[1,]`, false}, {`{"a":1,}`, false}, {`{"a"}`, false}, {`{1:2}`, false},
		{`"\x"`, false}, {`"\u12"`, false}, {`"\u12g4"`, false}, {"\"a\x01\"", false}, {`"open`, false},
		{`1 2`, false}, {`[1}`, false}, {`NaN`, false},
		{strings.Repeat("[", DefaultMaxDepth) + strings.Repeat("]", DefaultMaxDepth), true},
		{strings.Repeat("[", DefaultMaxDepth+1) + strings.Repeat("]", DefaultMaxDepth+1), false},
	}
	for _, tt := range tests {
		if got := isValid([]byte(tt.in)); got != tt.ok {
			t.Errorf("isValid(%.40q) = %v, want %v", tt.in, got, tt.ok)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		raw, want string
		err       error
	}{
		{`plain`, "plain", nil},
		{`caf\u00e9 \"x\"`, `café "x"`, nil},
		{`\ud83d\ude00`, "😀", nil},
		{`\ud83d`, "\uFFFD", nil},
		{`\ud83dx`, "\uFFFDx", nil},
		{`\ude00\ud83d`, "\uFFFD\uFFFD", nil},
		{`\ud83d\u0041`, "\uFFFDA", nil},
		{`\u0000`, "\x00", nil},
		{"bad \xff", "", ErrUTF8},
	}
	for _, tt := range tests {
		got, err := DecodeString([]byte(tt.raw), strings.Contains(tt.raw, `\`))
		if !errors.Is(err, tt.err) || err == nil && got != tt.want {
			t.Errorf("DecodeString(%q) = %q, %v; want %q, %v", tt.raw, got, err, tt.want, tt.err)
		}
	}
}

func TestCheckUnique(t *testing.T) {
	tests := []struct {
		in  string
		err error
	}{
		{`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`, nil},
		{`{"a":1,"a":2}`, ErrDuplicateKey},
		{`{"a":1,"\u0061":2}`, ErrDuplicateKey},
		{`{"x":[{"k":1,"k":1}]}`, ErrDuplicateKey},
		{`{"k":1,"K":2}`, nil},
		{many(40, false), nil},
		{many(40, true), ErrDuplicateKey},
		{`{"a":1,"a":2`, ErrDuplicateKey}, // reported before the end is reached
		{`{"a":1`, ErrSyntax},
		{`[1] x`, ErrSyntax},
	}
	for _, tt := range tests {
		if err := CheckUnique([]byte(tt.in)); !errors.Is(err, tt.err) || tt.err == nil && err != nil {
			t.Errorf("CheckUnique(%.40q) = %v, want %v", tt.in, err, tt.err)
		}
	}
	var dk *DuplicateKeyError
	if err := CheckUnique([]byte(`{"note":1,"note":2}`)); !errors.As(err, &dk) || dk.Key != "note" {
		t.Errorf("DuplicateKeyError = %v", err)
	}
}

// many is an object of n distinct keys, with the first repeated at the end
// when dup is set: past smallSet, so the map path is used.
func many(n int, dup bool) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	if dup {
		b.WriteString(`,"k":2`)
	}
	b.WriteString("}")
	return b.String()
}

// FuzzScan checks the grammar against encoding/json: the same documents are
// valid (within the depth cap), every string decodes to what encoding/json
// decodes, and CheckUnique refuses exactly the objects that repeat a key.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,"\u00e9\ud83d"]}`, `{"a":1,"\u0061":2}`, `"\ud800\udc00"`, `[tru]`, `01`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if deeper(data, DefaultMaxDepth-1) {
			return
		}
		valid := isValid(data)
		if valid != json.Valid(data) {
			t.Fatalf("isValid = %v, encoding/json says %v: %q", valid, !valid, data)
		}
		if !valid {
			return
		}
		checkStrings(t, data)
		err := CheckUnique(data)
		if errors.Is(err, ErrUTF8) {
			return // a key that is not UTF-8: encoding/json would replace it
		}
		if dup := repeats(t, data); dup != errors.Is(err, ErrDuplicateKey) {
			t.Fatalf("CheckUnique = %v, repeated key: %v, in %q", err, dup, data)
		}
	})
}

// checkStrings decodes every string of valid data both ways.
func checkStrings(t *testing.T, data []byte) {
	s := Scanner{Data: data}
	for s.Pos < len(data) {
		if data[s.Pos] != '"' {
			s.Pos++
			continue
		}
		start := s.Pos
		raw, esc, err := s.String()
		if err != nil {
			t.Fatalf("String at %d of valid %q: %v", start, data, err)
		}
		var want string
		if err := json.Unmarshal(data[start:s.Pos], &want); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeString(raw, esc)
		if !utf8.Valid(raw) {
			if err == nil {
				t.Fatalf("decoded non-UTF-8 %q", raw)
			}
			continue
		}
		if err != nil || got != want {
			t.Fatalf("DecodeString(%q) = %q, %v; encoding/json says %q", raw, got, err, want)
		}
	}
}

// repeats reports whether any object in data repeats a key, by decoding
// with encoding/json token by token.
func repeats(t *testing.T, data []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: tok == '{', keys: map[string]bool{}, key: tok == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.key {
				if top.keys[tok] {
					return true
				}
				top.keys[tok] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
}

func deeper(data []byte, n int) bool {
	depth := 0
	for _, c := range data {
		switch c {
		case '{', '[':
			depth++
			if depth > n {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// FuzzPlainWord: plainWord is true exactly when no byte of the word is
// '"', '\\' or below 0x20 (what String's byte loop stops at), and the
// lowest byte specialBytes flags is the first such byte (String jumps to
// it).
func FuzzPlainWord(f *testing.F) {
	for _, w := range []uint64{0, 0x2020202020202020, 0x2122232425262728, 0x5c5c5c5c5c5c5c5c, 0x1f7f8081ffffffff, 0x2221202120212021, 0xffffffffffffffff} {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, w uint64) {
		want, first := true, 8
		for i := range 8 {
			if c := byte(w >> (8 * i)); c == '"' || c == '\\' || c < 0x20 {
				want = false
				first = min(first, i)
			}
		}
		if got := plainWord(w); got != want {
			t.Fatalf("plainWord(%#016x) = %v, want %v", w, got, want)
		}
		if got := bits.TrailingZeros64(specialBytes(w)) / 8; got != first {
			t.Fatalf("specialBytes(%#016x) flags byte %d first, want %d", w, got, first)
		}
	})
}

// TestSkipCountsValues: Skip counts every value and key; past MaxValues it
// stops with ErrValues, and with no MaxValues it only counts.
func TestSkipCountsValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`1`, 1},
		{`"s"`, 1},
		{`[]`, 1},
		{`{}`, 1},
		{`[1,2,3]`, 4},
		{`{"a":1,"b":[true,null]}`, 7},
		{`{"cwe":[{},{},{}]}`, 6},
	} {
		s := Scanner{Data: []byte(tc.in)}
		if err := s.Skip(0); err != nil || s.Values != tc.want {
			t.Errorf("%s: %d values, %v; want %d", tc.in, s.Values, err, tc.want)
		}
		s = Scanner{Data: []byte(tc.in), MaxValues: tc.want}
		if err := s.Skip(0); err != nil {
			t.Errorf("%s within %d values: %v", tc.in, tc.want, err)
		}
		s = Scanner{Data: []byte(tc.in), MaxValues: tc.want - 1}
		if err := s.Skip(0); tc.want > 1 && !errors.Is(err, ErrValues) {
			t.Errorf("%s over %d values: %v", tc.in, tc.want-1, err)
		}
	}
}

// FuzzStringDecoded holds Scanner.StringDecoded, the scan that decodes as
// it reads, to String and AppendDecoded run one after the other: the same
// raw content, escapes flag, end position and error, and the same decoded
// bytes appended after what dst held.
func FuzzStringDecoded(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\ud83d\ude00 \ud83d \ude00\ud800\u0041"`,
		`"\u12"`, `"\x"`, "\"a\x01\"", "\"\xff\\n\"", `"` + strings.Repeat(`{\"k\":\"v\"},`, 40) + `"`, `"unterminated\"`, `x`} {
		f.Add([]byte(s), []byte("kept"))
	}
	f.Fuzz(func(t *testing.T, data, dst []byte) {
		a := Scanner{Data: data}
		raw, esc, errA := a.String()
		var want []byte
		if errA == nil && esc {
			want, errA = AppendDecoded(slices.Clone(dst), raw)
		}
		b := Scanner{Data: data}
		raw2, dec, esc2, errB := b.StringDecoded(slices.Clone(dst))
		if (errA == nil) != (errB == nil) || errA != nil && !errors.Is(errB, errA) {
			t.Fatalf("errors differ: %v and %v on %q", errA, errB, data)
		}
		if errA != nil {
			return
		}
		if string(raw) != string(raw2) || esc != esc2 || a.Pos != b.Pos {
			t.Fatalf("scan differs on %q: %q %v %d, %q %v %d", data, raw, esc, a.Pos, raw2, esc2, b.Pos)
		}
		if !esc {
			want = dst
		}
		if string(dec) != string(want) {
			t.Fatalf("decoded differs on %q: %q, want %q", data, dec, want)
		}
	})
}
