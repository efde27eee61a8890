package tsig_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
)

// secret256 is a 32-byte secret, as tsig-keygen makes for hmac-sha256.
const (
	secret256 = "aDuN3MJK7Ptz0Q0lQbbBv2Dq0vQ2E+JtG0M8q3Xk1sE="
	secret512 = "v7Xcx2c0Wv6Ym2iM9J8Qf9PqgxTkFQ8q2m3xW0JmQpq5xQf0Cz8q2m3xW0JmQpq5xQf0Cz8q2m3xW0JmQpq5xQ=="
)

// The three forms the servers' tools write.
var forms = map[string]string{
	"bind": `# made by tsig-keygen
key "xfr-key" {
	algorithm hmac-sha256;
	secret "` + secret256 + `";
};
/* a second key */ key update.example { algorithm HMAC-SHA512; // the long one
	secret "` + secret512 + `"; };
`,
	"knot": `# hmac-sha256:xfr-key:` + secret256 + `
key:
  - id: xfr-key
    algorithm: hmac-sha256
    secret: ` + secret256 + `
  - id: update.example
    algorithm: hmac-sha512
    secret: ` + secret512 + `
`,
	"lines": "# keys\nhmac-sha256:xfr-key:" + secret256 + "\n\nhmac-sha512:Update.Example.:" + secret512 + "\n",
}

func TestParseForms(t *testing.T) {
	for name, text := range forms {
		t.Run(name, func(t *testing.T) {
			r, err := tsig.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			keys := r.Keys()
			if len(keys) != 2 || r.Len() != 2 {
				t.Fatalf("keys %v", keys)
			}
			k, ok := r.Key("XFR-KEY")
			if !ok || k.Name() != "xfr-key." || k.Algorithm() != tsig.HMACSHA256 || k.WireAlgorithm() != mdns.HmacSHA256 || k.SecretBase64() != secret256 {
				t.Fatalf("xfr-key: %v", k)
			}
			k, ok = r.Key("update.example.")
			if !ok || k.Algorithm() != tsig.HMACSHA512 {
				t.Fatalf("update.example: %v", k)
			}
		})
	}
}

// TestParseRefusals: weak algorithms, short secrets, broken files and
// other statements are refused with the line, never the secret.
func TestParseRefusals(t *testing.T) {
	short := "c2hvcnQ=" // 5 bytes
	cases := map[string]string{
		"md5":          "hmac-md5:k:" + secret256,
		"sha1":         `key "k" { algorithm hmac-sha1; secret "` + secret256 + `"; };`,
		"short secret": "hmac-sha256:k:" + short,
		"not base64":   "hmac-sha256:k:" + secret256[:10] + "!!",
		"no key":       "# nothing\n",
		"empty":        "",
		"bad name":     "hmac-sha256:bad name:" + secret256,
		"not a line":   "hmac-sha256 " + secret256,
		"options":      `options { directory "/tmp"; };`,
		"unclosed":     `key "k" { algorithm hmac-sha256; secret "` + secret256,
		"no semicolon": `key "k" { algorithm hmac-sha256; secret "` + secret256 + `"; }`,
		"comment open": `/* key "k" { };`,
		"duplicate":    "hmac-sha256:k:" + secret256 + "\nhmac-sha512:K.:" + secret512,
		"knot field":   "key:\n  - id: k\n    algorithm: hmac-sha256\n    secret: " + secret256 + "\n    extra: 1\n",
		"too big":      strings.Repeat("#", tsig.MaxFileBytes+1),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := tsig.Parse(text)
			if !errors.Is(err, tsig.ErrKeyFile) {
				t.Fatalf("err %v, want ErrKeyFile", err)
			}
			if strings.Contains(err.Error(), secret256) || strings.Contains(err.Error(), secret512) || strings.Contains(err.Error(), short) {
				t.Fatalf("error shows a secret: %v", err)
			}
		})
	}
}

// TestKeyNeverPrintsSecret: every formatting verb of a key and a ring
// leaves the secret out.
func TestKeyNeverPrintsSecret(t *testing.T) {
	r, err := tsig.Parse(forms["lines"])
	if err != nil {
		t.Fatal(err)
	}
	k, _ := r.Key("xfr-key")
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k), fmt.Sprintf("%v %+v %#v", r, r, *r), fmt.Sprint(r.Keys())} {
		if strings.Contains(s, secret256) || strings.Contains(s, secret512) {
			t.Fatalf("printed a secret: %s", s)
		}
	}
}

// TestSignVerify: a message signed with a key verifies with the ring, and
// fails with another secret, another algorithm, an unknown key or a
// changed byte.
func TestSignVerify(t *testing.T) {
	r, err := tsig.Parse(forms["lines"])
	if err != nil {
		t.Fatal(err)
	}
	sign := func(key, alg string, ring mdns.TsigProvider) []byte {
		m := new(mdns.Msg)
		m.SetQuestion("example.com.", mdns.TypeSOA)
		m.SetTsig(key, alg, 300, time.Now().Unix())
		b, _, err := mdns.TsigGenerateWithProvider(m, ring, "", false)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := sign("xfr-key.", mdns.HmacSHA256, r)
	if err := mdns.TsigVerifyWithProvider(good, r, "", false); err != nil {
		t.Fatalf("good message: %v", err)
	}
	other, _ := tsig.Parse("hmac-sha256:xfr-key:" + strings.Repeat("A", 43) + "=")
	if err := mdns.TsigVerifyWithProvider(sign("xfr-key.", mdns.HmacSHA256, other), r, "", false); !errors.Is(err, tsig.ErrBadSignature) {
		t.Fatalf("other secret: %v", err)
	}
	if _, _, err := mdns.TsigGenerateWithProvider(func() *mdns.Msg {
		m := new(mdns.Msg)
		m.SetQuestion("example.com.", mdns.TypeSOA)
		m.SetTsig("xfr-key.", mdns.HmacSHA512, 300, time.Now().Unix())
		return m
	}(), r, "", false); !errors.Is(err, tsig.ErrAlgorithm) {
		t.Fatalf("algorithm mismatch: %v", err)
	}
	unknown, _ := tsig.Parse("hmac-sha256:nobody:" + secret256)
	if err := mdns.TsigVerifyWithProvider(sign("nobody.", mdns.HmacSHA256, unknown), r, "", false); !errors.Is(err, tsig.ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	flipped := append([]byte(nil), good...)
	flipped[3] ^= 1
	if err := mdns.TsigVerifyWithProvider(flipped, r, "", false); err == nil {
		t.Fatal("a changed message verified")
	}
}
