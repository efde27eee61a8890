package upstream

import (
	"errors"
	"strings"
	"testing"
)

// TestJSONBudget: one row per case: within the budget, over it in values or
// in depth, and not JSON at all.
func TestJSONBudget(t *testing.T) {
	b := JSONBudget{MaxValues: 10, MaxDepth: 3}
	for _, tc := range []struct {
		in   string
		want error
	}{
		{`{"a":[1,2,3]}`, nil},
		{`{"cwe":[{},{},{},{},{},{},{},{},{}]}`, ErrJSONBudget},
		{`[[[1]]]`, nil},
		{`[[[[1]]]]`, ErrJSONBudget},
		{`{"a":1,"b":2,"c":3,"d":4,"e":5}`, ErrJSONBudget}, // keys count
		{`{"a":`, ErrMalformedResponse},
		{`{} {}`, ErrMalformedResponse},
		{``, ErrMalformedResponse},
	} {
		if err := b.Check([]byte(tc.in)); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("Check(%s) = %v, want %v", tc.in, err, tc.want)
		}
	}
	if err := (JSONBudget{}).Check([]byte(`[` + strings.Repeat(`{},`, 100_000) + `{}]`)); err != nil {
		t.Fatalf("the zero budget caps no values: %v", err)
	}
}

// BenchmarkJSONBudgetRefusal: refusing 3 MiB of {"cwe":[{},{},…]} at a
// budget of 400,000 values scans a third of it and allocates nothing.
func BenchmarkJSONBudgetRefusal(b *testing.B) {
	data := []byte(`{"cwe":[` + strings.Repeat(`{},`, 1<<20-1) + `{}]}`)
	bud := JSONBudget{MaxValues: 400_000, MaxDepth: 64}
	b.ReportAllocs()
	for b.Loop() {
		if err := bud.Check(data); !errors.Is(err, ErrJSONBudget) {
			b.Fatal(err)
		}
	}
}
