package untrusted

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// FuzzJSONReusedKeySets: JSON reuses the key sets of earlier documents
// (keySets); its output and report for b after sanitizing a are those of a
// writer with fresh key sets, whatever a left behind (long keys, deep
// nesting, a set grown into a map, an error half way).
func FuzzJSONReusedKeySets(f *testing.F) {
	f.Add([]byte(`{"a":{"b":{"c":1,"d":2}},"e":[{"f":1}]}`), []byte(`{"a":1,"b":{"a":2}}`))
	f.Add([]byte(`{"k1":1,"k2":1,"k3":1,"k4":1,"k5":1,"k6":1,"k7":1,"k8":1,"k9":1,"k10":1,"k11":1,"k12":1,"k13":1,"k14":1,"k15":1,"k16":1,"k17":1}`), []byte(`{"k1":1,"k1\u200b":2}`))
	f.Add([]byte(`{"a":{"b":[{"c":`), []byte(`{"note":1,"no\u200bte":2,"note (2)":3}`))
	e := &Envelope{MaxString: 16, MaxResult: 7000}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		want, wantRep, wantErr := e.json(b, new([]*jsonscan.KeySet))
		kp := new([]*jsonscan.KeySet)
		_, _, _ = e.json(a, kp)
		got, rep, err := e.json(b, kp)
		if !bytes.Equal(got, want) || rep != wantRep || (err == nil) != (wantErr == nil) {
			t.Fatalf("after %q: %q %+v %v; fresh: %q %+v %v", a, got, rep, err, want, wantRep, wantErr)
		}
		if pooled, rep, err := e.JSON(b); !bytes.Equal(pooled, want) || rep != wantRep || (err == nil) != (wantErr == nil) {
			t.Fatalf("pooled: %q %+v %v; fresh: %q %+v %v", pooled, rep, err, want, wantRep, wantErr)
		}
	})
}

// wrapReference is Wrap as it was written before it sized its buffer
// exactly and took bytes too.
func wrapReference(e *Envelope, data string, rep Report) string {
	var b strings.Builder
	b.Grow(len(data) + 512)
	b.WriteString(`<untrusted-data source="`)
	b.WriteString(attr(e.source()))
	b.WriteString("\">\n")
	b.WriteString(data)
	if !strings.HasSuffix(data, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("</untrusted-data>\n")
	b.WriteString(e.note())
	if notes := e.Notes(rep); notes != "" {
		b.WriteString("\n")
		b.WriteString(notes)
	}
	return b.String()
}

// FuzzWrapBytes: WrapBytes(d) and Wrap(string(d)) are the envelope as it
// was written before (wrapReference), for any data, source and report.
func FuzzWrapBytes(f *testing.F) {
	f.Add([]byte(`{"a":1}`), false, 0)
	f.Add([]byte("line\n"), true, 3)
	f.Add([]byte(""), true, 0)
	f.Fuzz(func(t *testing.T, d []byte, cut bool, redacted int) {
		e := &Envelope{Source: "te\"st<" + string(d[:min(len(d), 3)]), PagingHint: "page on"}
		rep := Report{Truncated: cut, Redacted: redacted, OriginalSize: len(d), StringsCut: redacted % 3, Omitted: redacted % 5}
		want := wrapReference(e, string(d), rep)
		if got := e.Wrap(string(d), rep); got != want {
			t.Fatalf("Wrap %q, before %q", got, want)
		}
		if got := e.WrapBytes(d, rep); got != want {
			t.Fatalf("WrapBytes %q, before %q", got, want)
		}
	})
}

// secretKeyByContains is the test secretKey replaced: a bytes.Contains per
// word of secretWords on the normalized key.
func secretKeyByContains(raw []byte) bool {
	if !plainJSON(raw) {
		s, _ := jsonscan.Unescape(nil, raw)
		var st stats
		raw = cleanAppend(nil, string(s), &st)
	}
	var norm []byte
	for _, c := range raw {
		c = lower(c)
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			norm = append(norm, c)
		}
	}
	for _, word := range secretWords {
		if bytes.Contains(norm, word) {
			return true
		}
	}
	return false
}

// FuzzSecretKey: secretKey's one pass finds a secret word wherever a
// bytes.Contains per word finds one, and nowhere else; and its tables by
// first letter hold exactly secretWords.
func FuzzSecretKey(f *testing.F) {
	var byLetter []string
	for _, ws := range [][]string{secretT, secretS, secretP, secretC, secretA} {
		byLetter = append(byLetter, ws...)
	}
	var words []string
	for _, w := range secretWords {
		words = append(words, string(w))
		f.Add([]byte("x_" + strings.ToUpper(string(w)) + "-y"))
		f.Add(w[:len(w)-1])
	}
	slices.Sort(words)
	slices.Sort(byLetter)
	if !slices.Equal(words, byLetter) {
		f.Fatalf("tables by letter %q, secretWords %q", byLetter, words)
	}
	f.Add([]byte(`api\u005fkey`))
	f.Add([]byte("tototoken"))
	f.Add([]byte("pass\u200bword"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := secretKey(raw), secretKeyByContains(raw); got != want {
			t.Fatalf("secretKey(%q) = %v, want %v", raw, got, want)
		}
	})
}
