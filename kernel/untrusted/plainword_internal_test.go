package untrusted

import "testing"

// FuzzPlainWord: plainWord is true exactly when each byte is printable ASCII
// other than '<' (what plainRun copies at once).
func FuzzPlainWord(f *testing.F) {
	f.Add([]byte("abcdefgh"))
	f.Add([]byte("abc<efgh"))
	f.Add([]byte("abc\x7fefgh"))
	f.Add([]byte("abc\x1fefgh"))
	f.Add([]byte("abc\tefgh"))
	f.Add([]byte("\x80bcdefgh"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 8 {
			return
		}
		w := string(b[:8])
		want := true
		for i := 0; i < 8; i++ {
			c := w[i]
			if c < 0x20 || c > 0x7e || c == '<' {
				want = false
			}
		}
		if got := plainWord(w); got != want {
			t.Fatalf("plainWord(%q) = %v, want %v", w, got, want)
		}
	})
}
