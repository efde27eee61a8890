package identity

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// FuzzJWT feeds arbitrary bearer tokens to the verifier. It must never
// panic, must answer only with *authError, and must accept nothing but the
// one token this run signed.
func FuzzJWT(f *testing.F) {
	a := newTestOAuth(f, nil)
	valid := signJWT(f, "RS256", "rsa-1", tk(f).rsa, claims(nil), nil)
	f.Add(valid)
	f.Add(signJWT(f, "EdDSA", "ed-1", tk(f).ed, claims(map[string]any{"scope": "x"}), nil))
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, token string) {
		p, err := a.verify(context.Background(), token)
		if err == nil {
			if token != valid {
				t.Fatalf("accepted a token this run did not sign: %+v", p)
			}
			return
		}
		var ae *authError
		if !errors.As(err, &ae) || ae.Status < 400 {
			t.Fatalf("error is not a refusal: %v", err)
		}
		if len(token) >= 12 && strings.Contains(err.Error(), token) {
			t.Fatal("error quotes the token")
		}
	})
}

// FuzzJWKS feeds arbitrary documents to parseJWKS and looks up every alg.
func FuzzJWKS(f *testing.F) {
	f.Add(publishedSet(f))
	f.Add([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","d":"x"}]}`))
	f.Add([]byte(`{"keys":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := parseJWKS(data)
		if err != nil {
			if !errors.Is(err, errJWKS) {
				t.Fatalf("error without ErrJWKS: %v", err)
			}
			return
		}
		if set.Len() == 0 {
			t.Fatal("empty set accepted")
		}
		for _, alg := range []string{"RS256", "PS256", "ES256", "EdDSA", "HS256", "none"} {
			for _, kid := range []string{"", "rsa-1", "x"} {
				set.lookup(kid, alg)
			}
		}
	})
}

var keyFileError = regexp.MustCompile(`^identity: api key file: (line [0-9]+: )?(` + strings.Join([]string{
	regexp.QuoteMeta("want <sha256-hex> <plan> [<id>] [groups=<g>,...] (line not shown)"),
	regexp.QuoteMeta("a group must be 1-128 characters of [A-Za-z0-9._@:+-], groups separated by commas"),
	`more than [0-9]+ groups`,
	regexp.QuoteMeta("first field is not a 64-digit hex SHA-256; store HashKey(key), never the key (line not shown)"),
	regexp.QuoteMeta("first field is not hex; store HashKey(key), never the key (line not shown)"),
	regexp.QuoteMeta("plan must be 1-64 characters of [A-Za-z0-9._-]"),
	regexp.QuoteMeta("id must be 1-128 characters of [A-Za-z0-9._@:+-]"),
	`same key hash as line [0-9]+`,
	`longer than [0-9]+ bytes`,
	`larger than [0-9]+ bytes`,
	`no keys`,
}, "|") + `)$`)

// FuzzAPIKeyFile feeds arbitrary files to ParseAPIKeys. Every error must be
// one of the fixed messages, which never quote the file.
func FuzzAPIKeyFile(f *testing.F) {
	f.Add(testKeyFile())
	f.Add(aliceKey + " pro\n")
	f.Add(HashKey("a") + " pro a\n" + HashKey("a") + " free b\n")
	f.Add("# only a comment\n")
	f.Fuzz(func(t *testing.T, file string) {
		k, err := ParseAPIKeys(strings.NewReader(file))
		if err != nil {
			if !keyFileError.MatchString(err.Error()) {
				t.Fatalf("unexpected error text: %q", err)
			}
			return
		}
		for _, e := range k.entries {
			if !validPlan(e.plan) || !validKeyID(e.id) || len(e.groups) > maxKeyGroups {
				t.Fatalf("invalid entry accepted: %q %q %q", e.plan, e.id, e.groups)
			}
			for _, g := range e.groups {
				if !validKeyID(g) {
					t.Fatalf("invalid group accepted: %q", g)
				}
			}
		}
	})
}

// FuzzChallenge checks that any parameter values give one safe header line
// whose quoted strings decode back to the printable-ASCII part of the input.
func FuzzChallenge(f *testing.F) {
	f.Add("https://mcp.example.com/.well-known/oauth-protected-resource/mcp", "mcp:tools", "invalid_token")
	f.Add("a\"b\\c", "x\r\ny", "é\x00")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, meta, scope, code string) {
		s := bearerChallenge{ResourceMetadata: meta, Scope: []string{scope}, Error: code}.String()
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] >= 0x7f {
				t.Fatalf("unsafe byte %#x in %q", s[i], s)
			}
		}
		params, ok := parseChallenge(s)
		if !ok {
			t.Fatalf("cannot parse %q", s)
		}
		want := map[string]string{}
		for name, v := range map[string]string{"resource_metadata": meta, "scope": scope, "error": code} {
			if v != "" {
				want[name] = printable(v)
			}
		}
		if len(params) != len(want) {
			t.Fatalf("params %q, want %q", params, want)
		}
		for k, v := range want {
			if params[k] != v {
				t.Fatalf("%s = %q, want %q (header %q)", k, params[k], v, s)
			}
		}
	})
}

func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x20 && s[i] < 0x7f {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// parseChallenge parses `Bearer name="value", ...` as a client would.
func parseChallenge(s string) (map[string]string, bool) {
	rest, ok := strings.CutPrefix(s, "Bearer")
	if !ok {
		return nil, false
	}
	params := map[string]string{}
	rest = strings.TrimPrefix(rest, " ")
	for rest != "" {
		name, after, ok := strings.Cut(rest, `="`)
		if !ok {
			return nil, false
		}
		var v strings.Builder
		i := 0
		for ; i < len(after) && after[i] != '"'; i++ {
			if after[i] == '\\' {
				i++
				if i == len(after) {
					return nil, false
				}
			}
			v.WriteByte(after[i])
		}
		if i == len(after) {
			return nil, false
		}
		params[name] = v.String()
		rest = strings.TrimPrefix(after[i+1:], ", ")
	}
	return params, true
}
