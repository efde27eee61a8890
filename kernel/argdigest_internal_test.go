package kernel

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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
