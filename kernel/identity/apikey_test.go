package identity

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	aliceKey = "sk-alice-0123456789abcdefghijklmnopqrstuv"
	bobKey   = "sk-bob-zyxwvutsrqponmlkjihgfedcba9876543210"
)

func testKeyFile() string {
	return "# bulwark API keys\n\n" +
		HashKey(aliceKey) + " pro alice\n" +
		"   " + strings.ToUpper(HashKey(bobKey)) + "\tfree   \n" +
		"# end\n"
}

func TestHashKey(t *testing.T) {
	// SHA-256("abc"), a published test vector.
	if got := HashKey("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("HashKey(abc) = %s", got)
	}
}

func TestParseAPIKeys(t *testing.T) {
	h := HashKey(aliceKey)
	tests := []struct {
		name   string
		file   string
		n      int    // keys; 0 means an error is expected
		errHas string // substring of the error
	}{
		{"valid", testKeyFile(), 2, ""},
		{"CRLF", h + " pro alice\r\n", 1, ""},
		{"only comments", "# nothing\n\n", 0, "no keys"},
		{"empty", "", 0, "no keys"},
		{"raw key instead of hash", "# ok\n" + aliceKey + " pro\n", 0, "line 2"},
		{"hash too short", h[:63] + " pro\n", 0, "line 1"},
		{"not hex", strings.Repeat("z", 64) + " pro\n", 0, "not hex"},
		{"missing plan", h + "\n", 0, "line 1"},
		{"too many fields", h + " pro alice extra\n", 0, "line 1"},
		{"bad plan", h + " pr/o\n", 0, "plan"},
		{"bad id", h + " pro al|ice\n", 0, "id"},
		{"id too long", h + " pro " + strings.Repeat("a", 129) + "\n", 0, "id"},
		{"duplicate hash", h + " pro a\n" + strings.ToUpper(h) + " free b\n", 0, "same key hash as line 1"},
		{"line too long", h + " pro " + strings.Repeat("a", 2000) + "\n", 0, "line 1: longer than"},
		{"groups", h + " pro alice groups=ops,dev\n", 1, ""},
		{"groups without id", h + " pro groups=ops\n", 1, ""},
		{"groups not last", h + " pro groups=ops alice\n", 0, "id"},
		{"empty group", h + " pro alice groups=ops,,dev\n", 0, "group"},
		{"no groups", h + " pro alice groups=\n", 0, "group"},
		{"bad group", h + " pro alice groups=o|ps\n", 0, "group"},
		{"two groups fields", h + " pro groups=a groups=b\n", 0, "id"},
		{"too many groups", h + " pro alice groups=" + strings.Repeat("g,", 32) + "g\n", 0, "more than 32 groups"},
		{"file too large", strings.Repeat("#"+strings.Repeat(" ", 1000)+"\n", 1100), 0, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParseAPIKeys(strings.NewReader(tt.file))
			if tt.n > 0 {
				if err != nil || k.count() != tt.n {
					t.Fatalf("got %v, %v; want %d keys", k, err, tt.n)
				}
				return
			}
			if err == nil || !errors.Is(err, errKeyFile) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("err %v; want ErrKeyFile mentioning %q", err, tt.errHas)
			}
			if strings.Contains(err.Error(), aliceKey) || strings.Contains(err.Error(), "sk-") {
				t.Fatalf("error quotes the line: %v", err)
			}
		})
	}
}

func TestLoadAPIKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys")
	os.WriteFile(path, []byte(testKeyFile()), 0o600)
	if k, err := LoadAPIKeys(path); err != nil || k.count() != 2 {
		t.Fatalf("LoadAPIKeys = %v, %v", k, err)
	}
	if _, err := LoadAPIKeys(filepath.Join(dir, "missing")); !errors.Is(err, errKeyFile) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte(aliceKey+" pro\n"), 0o600)
	if _, err := LoadAPIKeys(bad); err == nil || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), aliceKey) {
		t.Fatalf("bad file: %v", err)
	}
}

func TestAPIKeysAuthenticate(t *testing.T) {
	keys, err := ParseAPIKeys(strings.NewReader(testKeyFile()))
	if err != nil {
		t.Fatal(err)
	}
	bobID := "key-" + HashKey(bobKey)[:12]
	tests := []struct {
		name      string
		build     func(r *http.Request)
		want      Principal
		status    int
		challenge string
	}{
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+aliceKey) },
			Principal{ID: "alice", Plan: "pro", Scheme: SchemeAPIKey}, 0, ""},
		{"x-api-key", func(r *http.Request) { r.Header.Set("X-API-Key", bobKey) },
			Principal{ID: bobID, Plan: "free", Scheme: SchemeAPIKey}, 0, ""},
		{"both equal", func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+aliceKey)
			r.Header.Set("X-API-Key", aliceKey)
		}, Principal{ID: "alice", Plan: "pro", Scheme: SchemeAPIKey}, 0, ""},
		{"x-api-key with basic auth beside", func(r *http.Request) {
			r.Header.Set("Authorization", "Basic dXNlcjpwYXNz")
			r.Header.Set("X-API-Key", aliceKey)
		}, Principal{ID: "alice", Plan: "pro", Scheme: SchemeAPIKey}, 0, ""},
		{"both different", func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+aliceKey)
			r.Header.Set("X-API-Key", bobKey)
		}, Principal{}, 400, `Bearer error="invalid_request"`},
		{"two x-api-key", func(r *http.Request) {
			r.Header.Add("X-API-Key", aliceKey)
			r.Header.Add("X-API-Key", aliceKey)
		}, Principal{}, 400, `Bearer error="invalid_request"`},
		{"unknown key", func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk-mallory") },
			Principal{}, 401, `Bearer error="invalid_token"`},
		{"hash presented as key", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+HashKey(aliceKey)) },
			Principal{}, 401, `Bearer error="invalid_token"`},
		{"key with suffix", func(r *http.Request) { r.Header.Set("X-API-Key", aliceKey+"x") },
			Principal{}, 401, `Bearer error="invalid_token"`},
		{"too long", func(r *http.Request) { r.Header.Set("X-API-Key", strings.Repeat("k", 2000)) },
			Principal{}, 401, `Bearer error="invalid_token"`},
		{"empty bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer") },
			Principal{}, 401, `Bearer error="invalid_token"`},
		{"none", func(r *http.Request) {}, Principal{}, 401, `Bearer`},
		{"basic only", func(r *http.Request) { r.Header.Set("Authorization", "Basic dXNlcjpwYXNz") },
			Principal{}, 401, `Bearer`},
		{"in query", func(r *http.Request) { r.URL.RawQuery = "access_token=" + aliceKey },
			Principal{}, 400, `Bearer error="invalid_request"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			tt.build(r)
			p, err := keys.Authenticate(r)
			if tt.status == 0 {
				if err != nil || !reflect.DeepEqual(p, tt.want) {
					t.Fatalf("got %+v, %v; want %+v", p, err, tt.want)
				}
				return
			}
			var ae *authError
			if !errors.As(err, &ae) || ae.Status != tt.status || ae.Challenge != tt.challenge {
				t.Fatalf("got %+v, %v; want %d %q", p, err, tt.status, tt.challenge)
			}
			if strings.Contains(err.Error(), aliceKey) || strings.Contains(err.Error(), "sk-mallory") {
				t.Fatalf("error contains the key: %v", err)
			}
		})
	}
}

func BenchmarkAPIKeysLookup(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		sb.WriteString(HashKey(strings.Repeat("k", i+1)) + " free\n")
	}
	sb.WriteString(HashKey(aliceKey) + " pro alice\n")
	keys, err := ParseAPIKeys(strings.NewReader(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok := keys.lookup(aliceKey); !ok {
			b.Fatal("not found")
		}
	}
}

// TestAPIKeyGroups: a key's groups= field gives its principal Groups,
// sorted and without duplicates; a key line without one has none.
func TestAPIKeyGroups(t *testing.T) {
	keys, err := ParseAPIKeys(strings.NewReader(HashKey(aliceKey) + " pro alice groups=ops,dev,ops\n" + HashKey(bobKey) + " free bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][]string{aliceKey: {"dev", "ops"}, bobKey: nil} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		p, err := keys.Authenticate(r)
		if err != nil || !reflect.DeepEqual(p.Groups, want) {
			t.Errorf("groups %q, %v; want %q", p.Groups, err, want)
		}
	}
}
