package authz

import (
	"math"
	"strconv"
	"testing"
)

// TestAppendKeyIntMatchesStrconv: the memo keys' numbers are written
// byte for byte as strconv.AppendInt writes them, small ones included, so
// no two requests that differ share a key.
func TestAppendKeyIntMatchesStrconv(t *testing.T) {
	ns := []int64{math.MinInt64, math.MaxInt64, -100, -99, -10, -9, -1}
	for n := int64(0); n <= 1000; n++ {
		ns = append(ns, n)
	}
	for _, n := range ns {
		if got, want := string(appendKeyInt([]byte("x"), n)), string(strconv.AppendInt([]byte("x"), n, 10)); got != want {
			t.Fatalf("appendKeyInt(%d) = %q, want %q", n, got, want)
		}
	}
}
