package egress_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

const key = "vdbk_3f9a1c77e2b84d05a6c1"

// hostileForms are the ways an upstream has written a secret to get it past
// a scrubber: each must be found.
func hostileForms(v string) map[string]string {
	var esc, pct, zw, shy, tags, bidi, mixed strings.Builder
	for i, r := range v {
		fmt.Fprintf(&esc, `\u%04x`, r)
		fmt.Fprintf(&pct, "%%%02X", r)
		zw.WriteRune(r)
		shy.WriteRune(r)
		tags.WriteRune(r)
		bidi.WriteRune(r)
		mixed.WriteRune(r)
		if i < len(v)-1 {
			zw.WriteString("\u200b")
			shy.WriteString("\u00ad")
			tags.WriteRune(0xE0041 + rune(i%26))
			bidi.WriteString("\u202e")
			mixed.WriteString([]string{"\u200c", "\u2060", "\ufeff", "\u180e", "\u034f", "\u3164"}[i%6])
		}
	}
	return map[string]string{
		"plain":                 "the key is " + v + ".",
		"json-escaped":          `{"k":"` + esc.String() + `"}`,
		"percent-encoded":       "https://x.example/?k=" + pct.String(),
		"url-query":             "https://x.example/?k=" + url.QueryEscape(v),
		"zero-width":            zw.String(),
		"soft-hyphen":           shy.String(),
		"unicode-tags":          tags.String(),
		"bidi-controls":         bidi.String(),
		"default-ignorables":    mixed.String(),
		"base64":                base64.StdEncoding.EncodeToString([]byte("Basic user:" + v)),
		"base64url":             base64.RawURLEncoding.EncodeToString([]byte("x" + v + "y")),
		"bearer":                "Authorization: Bearer " + v,
		"cleaned bidi markers":  strings.Join(strings.Split(v, ""), "[U+202E]"),
		"cut before ellipsis":   "…" + v[:9] + "…",
		"cut before truncation": v[:7] + "\n[truncated: 7 of 100 characters shown]",
	}
}

func TestScrubFindsEveryForm(t *testing.T) {
	sec := egress.NewSecrets(key)
	for name, text := range hostileForms(key) {
		t.Run(name, func(t *testing.T) {
			out, n := sec.Scrub(text)
			if n == 0 {
				t.Fatalf("not found in %q", text)
			}
			if !strings.Contains(out, egress.Redacted) {
				t.Fatalf("no %s in %q", egress.Redacted, out)
			}
			for _, part := range []string{key, key[5:17], key[10:]} {
				if strings.Contains(out, part) {
					t.Fatalf("%q still in %q", part, out)
				}
			}
		})
	}
}

func TestScrubLeavesOtherText(t *testing.T) {
	sec := egress.NewSecrets(key)
	for _, text := range []string{
		"", "nothing secret here", "50% of vdbk_ keys", "a \\u0041 escape", "…cut…",
		"vdbk_3f9a1c77e2b84d05a6c", // one character short
		strings.Repeat("%", 1000), strings.Repeat("\\u", 1000),
	} {
		if out, n := sec.Scrub(text); n != 0 || out != text {
			t.Errorf("Scrub(%q) = %q, %d", text, out, n)
		}
	}
}

func TestScrubReplacesWholeSpan(t *testing.T) {
	sec := egress.NewSecrets(key)
	split := key[:6] + "\u200b\u200b" + key[6:]
	out, n := sec.Scrub("[" + split + "]")
	if n != 1 || out != "["+egress.Redacted+"]" {
		t.Fatalf("Scrub = %q, %d", out, n)
	}
	out, n = sec.Scrub(key + key + " " + key)
	if n != 2 || out != egress.Redacted+" "+egress.Redacted { // adjacent findings merge
		t.Fatalf("Scrub = %q, %d", out, n)
	}
}

func TestCheckSecret(t *testing.T) {
	for v, want := range map[string]error{
		"":                      egress.ErrEmptySecret,
		"   ":                   egress.ErrEmptySecret,
		"short-key":             egress.ErrShortSecret,
		"exactly12byt":          nil,
		key:                     nil,
		strings.Repeat("k", 11): egress.ErrShortSecret,
	} {
		if err := egress.CheckSecret(v); !errors.Is(err, want) {
			t.Errorf("CheckSecret(%d bytes) = %v, want %v", len(v), err, want)
		}
		if err := egress.CheckSecret(v); err != nil && v != "" && strings.Contains(err.Error(), v) {
			t.Errorf("the error quotes the value: %v", err)
		}
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	sec := egress.NewSecrets(key)
	for _, s := range []string{fmt.Sprint(sec), fmt.Sprintf("%v %+v %#v %s", sec, sec, sec, sec)} {
		if strings.Contains(s, key) {
			t.Fatalf("printed: %s", s)
		}
	}
}

func TestSecretsWith(t *testing.T) {
	var none *egress.Secrets
	if none.Len() != 0 || none.Contains(key) {
		t.Fatal("nil set holds something")
	}
	a := egress.NewSecrets(key)
	b := a.With("another-secret-value")
	if a.Len() != 1 || b.Len() != 2 || !b.Contains("x another-secret-value") || a.Contains("another-secret-value") {
		t.Fatal("With changed its receiver or lost a value")
	}
	if a.With(key, "") != a {
		t.Fatal("With of known values made a new set")
	}
	if u := a.Union(egress.NewSecrets("third-secret-value")); u.Len() != 2 {
		t.Fatalf("Union has %d values", u.Len())
	}
}

// Short values (refused by CheckSecret, but a caller may still register
// them) are found as they are.
func TestScrubShortValue(t *testing.T) {
	sec := egress.NewSecrets("hunter2", key)
	out, n := sec.Scrub("pw=hunter2 key=" + key)
	if n != 2 || strings.Contains(out, "hunter2") {
		t.Fatalf("Scrub = %q, %d", out, n)
	}
}

// A secret holding a quote or a backslash, quoted in JSON text that an
// upstream put inside a string.
func TestScrubJSONQuoted(t *testing.T) {
	v := `pa"ss\word-0123456789`
	sec := egress.NewSecrets(v)
	text := `{"password":"pa\"ss\\word-0123456789"}`
	out, n := sec.Scrub(text)
	if n != 1 || strings.Contains(out, "word-0123456789") {
		t.Fatalf("Scrub(%s) = %s, %d", text, out, n)
	}
}
