package kernel

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/confirm"
)

// TestArgDigestIsTheHMAC: the pooled keyed hash gives, for every call and
// from many goroutines at once, the bytes a fresh hmac.New gives: the first
// 16 bytes of HMAC-SHA-256 of the canonical arguments, in hex. A hash put
// back unreset, or shared between goroutines, would differ.
func TestArgDigestIsTheHMAC(t *testing.T) {
	d := newArgDigester()
	want := func(canon []byte) string {
		m := hmac.New(sha256.New, d.key)
		m.Write(canon)
		return hex.EncodeToString(m.Sum(nil)[:16])
	}
	inputs := []map[string]any{
		nil, {}, {"zone": "example.com", "name": "www"},
		{"n": 1.5, "list": []any{"a", 2.0, nil, true}, "nested": map[string]any{"z": "<&>", "a": "\u2028"}},
		{"big": string(make([]byte, 10000))},
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				args := inputs[(g+i)%len(inputs)]
				canon, err := confirm.CanonicalValue(args)
				if err != nil {
					t.Error(err)
					return
				}
				if got, w := d.sum(canon), want(canon); got != w {
					t.Errorf("digest %s, want %s", got, w)
					return
				}
			}
		})
	}
	wg.Wait()
	if other := newArgDigester(); other.sum([]byte("{}")) == d.sum([]byte("{}")) {
		t.Fatal("two servers share a digest key")
	}
}

// TestArgsSumIsTheFingerprint: the sum a requestState binds is
// confirm.Fingerprint of the arguments, in hex.
func TestArgsSumIsTheFingerprint(t *testing.T) {
	args := map[string]any{"zone": "example.com", "ttl": 300.0, "records": []any{"a", "b"}}
	canon, err := confirm.CanonicalValue(args)
	if err != nil {
		t.Fatal(err)
	}
	fp, _ := confirm.Fingerprint(args)
	if got := argsSum(canon); got != hex.EncodeToString(fp[:]) {
		t.Fatalf("argsSum %s, want %s", got, hex.EncodeToString(fp[:]))
	}
}

// TestDecodeArgumentsRefusals: each refusal keeps the message it had when
// the arguments were checked (jsonscan.CheckUnique) and decoded
// (encoding/json) in two passes; a top-level null with white space is still
// a nil map, as Unmarshal leaves it.
func TestDecodeArgumentsRefusals(t *testing.T) {
	for raw, want := range map[string]string{
		`{"a":1,"b":{"c":1,"c":2}}`: `The arguments repeat the key "c".`,
		`[1,2]`:                     "The arguments must be a JSON object.",
		`{"n":1e400}`:               "The arguments must be a JSON object.",
		`{"n":1e400,"a":1,"a":2}`:   `The arguments repeat the key "a".`,
		"{\"\xff\":1}":              "The arguments must be a JSON object with UTF-8 keys.",
		`{"a":1`:                    "The arguments must be a JSON object with UTF-8 keys.",
	} {
		_, err := decodeArguments([]byte(raw))
		var te *Error
		if !errors.As(err, &te) || te.Code != InvalidArgument || te.Message != want {
			t.Errorf("%q: %v, want %q", raw, err, want)
		}
	}
	if args, err := decodeArguments([]byte(" null ")); err != nil || args != nil {
		t.Fatalf("null: %#v %v", args, err)
	}
}
