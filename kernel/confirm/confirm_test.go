package confirm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newIssuer(c *clock, max int) *Issuer {
	return NewIssuer(nil, &Options{Now: c.now, MaxPending: max})
}

func binding(principal, payload string) Binding {
	return Binding{Principal: principal, Tool: "delete_rrset", Target: `{"name":"www","type":"A","zone":"example.com"}`, Payload: sha256.Sum256([]byte(payload))}
}

func TestRedeem(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	b := binding("alice", "p")
	cases := []struct {
		name    string
		attempt func(i *Issuer, tok string) error
		want    error
	}{
		{"right token", func(i *Issuer, tok string) error { return i.Redeem(ctx, b, tok) }, nil},
		{"empty", func(i *Issuer, tok string) error { return i.Redeem(ctx, b, "") }, ErrRefused},
		{"made up", func(i *Issuer, tok string) error { return i.Redeem(ctx, b, "AAAAAAAAAAAAAAAAAAAAAAAA") }, ErrRefused},
		{"other principal", func(i *Issuer, tok string) error { return i.Redeem(ctx, binding("mallory", "p"), tok) }, ErrRefused},
		{"other payload", func(i *Issuer, tok string) error { return i.Redeem(ctx, binding("alice", "q"), tok) }, ErrRefused},
		{"other tool", func(i *Issuer, tok string) error {
			o := b
			o.Tool = "delete_zone"
			return i.Redeem(ctx, o, tok)
		}, ErrRefused},
		{"other target", func(i *Issuer, tok string) error {
			o := b
			o.Target = "x"
			return i.Redeem(ctx, o, tok)
		}, ErrRefused},
		{"expired", func(i *Issuer, tok string) error {
			c.t = c.t.Add(DefaultTTL)
			defer func() { c.t = c.t.Add(-DefaultTTL) }()
			return i.Redeem(ctx, b, tok)
		}, ErrRefused},
		{"replayed", func(i *Issuer, tok string) error {
			if err := i.Redeem(ctx, b, tok); err != nil {
				return err
			}
			return i.Redeem(ctx, b, tok)
		}, ErrRefused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i := newIssuer(c, 0)
			tok, err := i.Issue(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.attempt(i, tok); !errors.Is(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if tc.want != nil && tc.name != "expired" && tc.name != "replayed" {
				// A wrong attempt leaves the pending token valid.
				if err := i.Redeem(ctx, b, tok); err != nil {
					t.Fatalf("pending token spent by a wrong attempt: %v", err)
				}
			}
		})
	}
}

func TestTokenEntropyAndCap(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	i := newIssuer(c, 3)
	seen := map[string]bool{}
	var toks []string
	for n := 0; n < 5; n++ {
		tok, err := i.Issue(ctx, binding("alice", "p"))
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) < 22 || seen[tok] {
			t.Fatalf("weak or repeated token %q", tok)
		}
		seen[tok] = true
		toks = append(toks, tok)
	}
	other, _ := i.Issue(ctx, binding("bob", "p"))
	if err := i.Redeem(ctx, binding("alice", "p"), toks[0]); err == nil {
		t.Fatal("oldest token not evicted")
	}
	if err := i.Redeem(ctx, binding("alice", "p"), toks[4]); err != nil {
		t.Fatalf("newest token: %v", err)
	}
	if err := i.Redeem(ctx, binding("bob", "p"), other); err != nil {
		t.Fatalf("another principal's cap affected: %v", err)
	}
}

func TestCanonical(t *testing.T) {
	same := [][]string{
		{`{"a":1,"b":[1,2]}`, ` { "b" : [1, 2], "a" : 1.0 } `, `{"b":[1,2],"a":1e0}`, `{"a":10E-1,"b":[1.00,2]}`},
		{`{"v":"é"}`, `{"v":"\u00e9"}`},
		{`123456789012345678901234567890`, `123456789012345678901234567890.000`},
		{`{"x":-0}`, `{"x":0}`},
	}
	for _, group := range same {
		want, err := canonicalJSON([]byte(group[0]))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range group[1:] {
			got, err := canonicalJSON([]byte(s))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("canonicalJSON(%s) = %s, want %s (%v)", s, got, want, err)
			}
		}
	}
	differ := [][2]string{
		{`[1,2]`, `[2,1]`},
		{`{"records":[{"value":"198.51.100.1"}]}`, `{"records":[{"value":"198.51.100.66"}]}`},
		{`123456789012345678901234567890`, `123456789012345678901234567891`},
		{`"1"`, `1`},
		{`{"a":null}`, `{}`},
	}
	for _, d := range differ {
		a, _ := canonicalJSON([]byte(d[0]))
		b, _ := canonicalJSON([]byte(d[1]))
		if bytes.Equal(a, b) {
			t.Errorf("%s and %s have one encoding %s", d[0], d[1], a)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1} {"b":2}`, `[1,]`} {
		if _, err := canonicalJSON([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// FuzzCanonical: canonical encoding is idempotent and equal for a document
// and its re-encoding with other white space.
func FuzzCanonical(f *testing.F) {
	f.Add([]byte(`{"b":[1,2.50,"x"],"a":{"z":null,"y":true}}`))
	f.Add([]byte(`[1e400, -0.0, 12345678901234567890]`))
	f.Add([]byte(`"\u00e9\ud83d\ude00"`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		c1, err := canonicalJSON(doc)
		if err != nil {
			return
		}
		c2, err := canonicalJSON(c1)
		if err != nil {
			t.Fatalf("canonical output %q does not parse: %v", c1, err)
		}
		if !bytes.Equal(c1, c2) {
			t.Fatalf("not idempotent: %q -> %q", c1, c2)
		}
		var spaced bytes.Buffer
		if err := json.Indent(&spaced, c1, " ", "\t"); err != nil {
			t.Fatal(err)
		}
		if c3, err := canonicalJSON(spaced.Bytes()); err != nil || !bytes.Equal(c3, c1) {
			t.Fatalf("white space changed the encoding: %q vs %q", c3, c1)
		}
	})
}
