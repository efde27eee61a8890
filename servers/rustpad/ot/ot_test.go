package ot

import (
	"errors"
	"strings"
	"testing"
)

func mustParse(t testing.TB, s string) *Operation {
	t.Helper()
	o, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return o
}

func mustApply(t testing.TB, o *Operation, s string) string {
	t.Helper()
	out, err := o.Apply(s)
	if err != nil {
		t.Fatalf("%v.Apply(%q): %v", o, s, err)
	}
	return out
}

// Reference §11.2 vector 1.
func TestBuilderNormalisation(t *testing.T) {
	tests := []struct{ in, want string }{
		{`[2,-1,"n",2]`, `[2,"n",-1,2]`},
		{`["a",-2,"b"]`, `["ab",-2]`},
		{`[1,-1,"x",-1,"y"]`, `[1,"xy",-2]`},
		{`[0,"",3,0]`, `[3]`},
		{`[-1,"a","b"]`, `["ab",-1]`},
		{`[]`, `[]`},
		{`[1,1,-1,-1]`, `[2,-2]`},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.in).String(); got != tt.want {
			t.Errorf("Parse(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestBuilderMethods(t *testing.T) {
	o := New().Retain(2).Delete(1).Insert("n").Retain(2)
	if got := o.String(); got != `[2,"n",-1,2]` {
		t.Errorf("got %s", got)
	}
	if o.BaseLen() != 5 || o.TargetLen() != 5 {
		t.Errorf("lengths %d %d, want 5 5", o.BaseLen(), o.TargetLen())
	}
	for _, bad := range []*Operation{New().Retain(-1), New().Delete(-2), New().Insert("\xff")} {
		if !errors.Is(bad.Err(), ErrInvalidOperation) {
			t.Errorf("%v: Err = %v, want ErrInvalidOperation", bad, bad.Err())
		}
		if _, err := bad.Apply(""); !errors.Is(err, ErrInvalidOperation) {
			t.Errorf("Apply of invalid op: %v", err)
		}
		if _, err := bad.MarshalJSON(); err == nil {
			t.Errorf("MarshalJSON of invalid op succeeded")
		}
	}
	if got := New().Retain(1 << 62).Retain(1 << 62).Retain(1 << 62).Err(); !errors.Is(got, ErrInvalidOperation) {
		t.Errorf("overflow: Err = %v", got)
	}
	var nilOp *Operation
	if nilOp.BaseLen() != 0 || !nilOp.IsNoop() || nilOp.String() != "[]" {
		t.Errorf("nil operation is not the empty operation")
	}
}

// Reference §11.2 vectors 2–8: h is in the history, e is the stale incoming
// edit, transformed as the first argument like the server does.
func TestTransformVectors(t *testing.T) {
	tests := []struct {
		name, doc, h, e, wantE, wantText string
	}{
		{"tie", "", `["a"]`, `["b"]`, `["b",1]`, "ba"},
		{"append race", "hello", `[5,"!"]`, `[5," world"]`, `[5," world",1]`, "hello world!"},
		{"overlapping deletes", "abcdef", `[1,-3,2]`, `[2,-3,1]`, `[1,-1,1]`, "af"},
		{"insert inside deleted range", "hello", `[1,-3,1]`, `[2,"X",3]`, `[1,"X",1]`, "hXo"},
		{"insert vs delete all", "hello", `[-5]`, `[5,"!"]`, `["!"]`, "!"},
		{"the trap", "", `["old text"]`, `["new"]`, `["new",8]`, "newold text"},
		{"unicode stale edit", "🎉😍𒀇👨‍👨‍👦‍👦", `["👯‍♂️",3,"𐅣𐅤𐅥",7]`, `[2,"\u0301\u0302\u0303",8]`,
			`[6,"\u0301\u0302\u0303",11]`, "👯‍♂️🎉😍\u0301\u0302\u0303𒀇𐅣𐅤𐅥👨‍👨‍👦‍👦"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, e := mustParse(t, tt.h), mustParse(t, tt.e)
			ep, hp, err := Transform(e, h)
			if err != nil {
				t.Fatal(err)
			}
			if !ep.Equal(mustParse(t, tt.wantE)) {
				t.Errorf("e′ = %v, want %s", ep, tt.wantE)
			}
			if got := mustApply(t, ep, mustApply(t, h, tt.doc)); got != tt.wantText {
				t.Errorf("text = %q, want %q", got, tt.wantText)
			}
			if got := mustApply(t, hp, mustApply(t, e, tt.doc)); got != tt.wantText {
				t.Errorf("other path text = %q, want %q", got, tt.wantText)
			}
		})
	}
}

func TestTransformPair(t *testing.T) {
	ap, bp, err := Transform(mustParse(t, `["~rust~"]`), mustParse(t, `["hello"]`))
	if err != nil {
		t.Fatal(err)
	}
	if ap.String() != `["~rust~",5]` || bp.String() != `[6,"hello"]` {
		t.Errorf("got (%v, %v)", ap, bp)
	}
	_, hp, _ := Transform(mustParse(t, `[2,-3,1]`), mustParse(t, `[1,-3,2]`))
	if hp.String() != `[1,-1,1]` {
		t.Errorf("h′ = %v, want [1,-1,1]", hp)
	}
	if _, _, err := Transform(mustParse(t, `[1]`), mustParse(t, `[2]`)); !errors.Is(err, ErrLengthMismatch) {
		t.Errorf("mismatched transform: %v", err)
	}
}

// Reference §11.2 vector 9.
func TestCompose(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{`["abc"]`, `[3,"def"]`, `["abcdef"]`},
		{`[1,-1,1]`, `["x",2]`, `["x",1,-1,1]`},
		{`["héllo"]`, `[1,-3,1]`, `["ho"]`},
		{`[2,"ab",1]`, `[3,-1,1]`, `[2,"a",1]`},
	}
	for _, tt := range tests {
		got, err := Compose(mustParse(t, tt.a), mustParse(t, tt.b))
		if err != nil {
			t.Fatalf("Compose(%s, %s): %v", tt.a, tt.b, err)
		}
		if got.String() != tt.want {
			t.Errorf("Compose(%s, %s) = %v, want %s", tt.a, tt.b, got, tt.want)
		}
	}
	if _, err := Compose(mustParse(t, `["a"]`), mustParse(t, `[2]`)); !errors.Is(err, ErrLengthMismatch) {
		t.Errorf("mismatched compose: %v", err)
	}
}

// Reference §11.2 vector 10 and §11.1 vector 8.
func TestTransformIndex(t *testing.T) {
	tests := []struct {
		op       string
		pos, out int
	}{
		{`[1,-3,2]`, 3, 1}, {`[1,-3,2]`, 5, 2}, {`["X",6]`, 0, 1}, {`[6,"X"]`, 6, 7},
		{`["🎉",3]`, 0, 1}, {`["🎉",3]`, 3, 4}, {`["a",10]`, 10, 11}, {`[4]`, 2, 2},
	}
	for _, tt := range tests {
		if got := TransformIndex(mustParse(t, tt.op), tt.pos); got != tt.out {
			t.Errorf("TransformIndex(%s, %d) = %d, want %d", tt.op, tt.pos, got, tt.out)
		}
	}
}

func TestApply(t *testing.T) {
	tests := []struct{ doc, op, want string }{
		{"", `["hello"]`, "hello"},
		{"hello", `[2,-1,"n",2]`, "henlo"},
		{"h🎉e🎉l👨‍👨‍👦‍👦lo", `[-14]`, ""},
		{"🎉😍𒀇👨‍👨‍👦‍👦", `["👯‍♂️",3,"𐅣𐅤𐅥",7]`, "👯‍♂️🎉😍𒀇𐅣𐅤𐅥👨‍👨‍👦‍👦"},
	}
	for _, tt := range tests {
		if got := mustApply(t, mustParse(t, tt.op), tt.doc); got != tt.want {
			t.Errorf("Apply(%q, %s) = %q, want %q", tt.doc, tt.op, got, tt.want)
		}
	}
	bad := []struct{ doc, op string }{
		{"abc", `[2]`}, {"abc", `[4]`}, {"a\xffc", `[3]`}, {"", `[-1]`},
	}
	for _, tt := range bad {
		if _, err := mustParse(t, tt.op).Apply(tt.doc); err == nil {
			t.Errorf("Apply(%q, %s) succeeded", tt.doc, tt.op)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		``, `null`, `{}`, `"a"`, `1`, `[1.5]`, `[1e3]`, `[1E3]`, `[-0]`, `[null]`, `[true]`, `[[1]]`,
		`[{"a":1}]`, `["\ud800"]`, `["\udc00x"]`, `["\ud800\u0041"]`, "[\"\xff\"]", `[1,]`, `[1`,
		`[9223372036854775808]`, `[-9223372036854775808]`, `[01]`, `[9223372036854775807,1]`,
	} {
		if o, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) = %v, want error", in, o)
		}
	}
	for _, in := range []string{` [ 1 , "a\ud83c\udf89" ] `, `["\\ud800"]`, `["a\"b"]`} {
		if _, err := Parse([]byte(in)); err != nil {
			t.Errorf("Parse(%q): %v", in, err)
		}
	}
}

func TestMarshalEscaping(t *testing.T) {
	o := New().Insert("a\"\\\n\t\r\b\f\x01</>&\u2028é")
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `["a\"\\\n\t\r\b\f\u0001</>&` + "\u2028é" + `"]`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	if back := mustParse(t, string(b)); !back.Equal(o) {
		t.Errorf("round trip: %v != %v", back, o)
	}
	var u Operation
	if err := u.UnmarshalJSON([]byte(`[3,-1]`)); err != nil || u.String() != `[3,-1]` {
		t.Errorf("UnmarshalJSON: %v %v", &u, err)
	}
	if !strings.Contains(New().Retain(-1).String(), "invalid") {
		t.Errorf("String of invalid op does not say so")
	}
}

func TestParseNormal(t *testing.T) {
	for _, in := range []string{`[0,"x"]`, `[1,1]`, `[-1,"a"]`, `["a","b"]`, `[""]`, `[-1,-1]`} {
		if _, err := ParseNormal([]byte(in)); !errors.Is(err, ErrMalformedJSON) {
			t.Errorf("ParseNormal(%s) = %v, want ErrMalformedJSON", in, err)
		}
	}
	for _, in := range []string{`[]`, `[2,"n",-1,2]`, `["ab",-1]`, `[1,-1,1]`} {
		if _, err := ParseNormal([]byte(in)); err != nil {
			t.Errorf("ParseNormal(%s): %v", in, err)
		}
	}
}

func TestApplyRunes(t *testing.T) {
	doc := []rune("h🎉llo")
	got, err := mustParse(t, `[1,-1,"é€",3,"!"]`).ApplyRunes(nil, doc)
	if err != nil || string(got) != "hé€llo!" {
		t.Errorf("ApplyRunes = %q, %v", string(got), err)
	}
	if _, err := mustParse(t, `[4]`).ApplyRunes(nil, doc); !errors.Is(err, ErrLengthMismatch) {
		t.Errorf("short text: %v", err)
	}
}

// ValidText is what the session and the fake peer check every frame with:
// what serde_json accepts as characters (the lone-surrogate scan is the
// kernel's own).
func TestValidText(t *testing.T) {
	for in, want := range map[string]bool{
		`{"Language":"go"}`:               true,
		`{"Language":"\ud83c\udf89"}`:     true,
		`{"Language":"\\ud800"}`:          true,
		`{"Language":"\ud800"}`:           false,
		`{"Language":"\udc00\ud800"}`:     false,
		"{\"Language\":\"\xff\"}":         false,
		"{\"Language\":\"\xed\xa0\x80\"}": false, // a surrogate in UTF-8 is invalid UTF-8
	} {
		if got := ValidText([]byte(in)); got != want {
			t.Errorf("ValidText(%q) = %v, want %v", in, got, want)
		}
	}
}
