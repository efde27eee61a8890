package httpsyntax

import "testing"

func TestIsToken(t *testing.T) {
	for s, want := range map[string]bool{
		"X-Api-Key":         true,
		"mcp-param-a.b":     true,
		"!#$%&'*+-.^_`|~09": true,
		"":                  false,
		"a b":               false,
		"a:b":               false,
		"a\r\nSet-Cookie":   false,
		"é":                 false,
		"a\x00":             false,
		"(comment)":         false,
		`"quoted"`:          false,
	} {
		if got := IsToken(s); got != want {
			t.Errorf("IsToken(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestIsTokenTable checks every byte against RFC 9110 §5.6.2's tchar.
func TestIsTokenTable(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		for _, p := range "!#$%&'*+-.^_`|~" {
			want = want || c == int(p)
		}
		if got := IsToken(string([]byte{byte(c)})); got != want {
			t.Errorf("IsToken(%q) = %v, want %v", rune(c), got, want)
		}
	}
}
