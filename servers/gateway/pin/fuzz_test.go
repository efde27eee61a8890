package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// FuzzCanonical: a canonical form is idempotent and valid JSON; the same
// value re-encoded (members reordered, white space, other escapes and
// number spellings) canonicalizes to the same bytes; any semantic change
// gives other bytes; a duplicated member name is refused. Seeds:
// testdata/fuzz/FuzzCanonical.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{readFile, `{"a":[1,2.50,-0,1e21,1e-7,"\u00e9"],"b":{"\ud83d\ude00":null,"\ufb33":true}}`, `[{"z":1,"y":2}]`, `"x"`, `0.1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := canonical(raw, 0)
		if err != nil {
			if !errors.Is(err, errDefinition) {
				t.Fatalf("error without ErrDefinition: %v", err)
			}
			return
		}
		if c2, err := canonical(c, 0); err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("not idempotent: %s -> %s, %v", c, c2, err)
		}
		var v any
		if err := json.Unmarshal(c, &v); err != nil {
			t.Fatalf("canonical form is not JSON: %v", err)
		}
		re, _ := json.MarshalIndent(v, " ", "\t") // Go's map order, other white space and escapes
		if c3, err := canonical(re, 0); err != nil || !bytes.Equal(c, c3) {
			t.Fatalf("re-encoding changed the canonical form:\n%s\n%s\n%v", c, c3, err)
		}
		if changed, ok := mutate(v); ok {
			m, _ := json.Marshal(changed)
			if c4, err := canonical(m, 0); err == nil && bytes.Equal(c, c4) {
				t.Fatalf("a semantic change kept the canonical form %s", c)
			}
		}
		if c[0] == '{' && len(c) > 2 {
			dec := jsontext.NewDecoder(bytes.NewReader(c))
			dec.ReadToken()
			key, err := dec.ReadValue()
			if err != nil {
				t.Fatal(err)
			}
			dup := append(append([]byte("{"), key...), ":null,"...)
			dup = append(dup, c[1:]...)
			if _, err := canonical(dup, 0); !errors.Is(err, errDefinition) {
				t.Fatalf("duplicate member %s accepted: %v", key, err)
			}
		}
	})
}

// mutate returns v with one semantic change.
func mutate(v any) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		m := map[string]any{"\x00fuzz": true}
		for k, x := range v {
			m[k] = x
		}
		return m, true
	case []any:
		return append(append([]any{}, v...), nil), true
	case string:
		return v + "x", true
	case float64:
		return v + 1, v+1 != v
	case bool:
		return !v, true
	case nil:
		return false, true
	}
	return nil, false
}

// FuzzScan: the scan never fails on a definition that canonicalizes, is
// deterministic, and its findings are bounded and safe to print. Seeds:
// testdata/fuzz/FuzzScan.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		readFile,
		`{"name":"a","description":"<IMPORTANT>ignore previous</IMPORTANT> https://x.example read_file \u200b\u202e"}`,
		`{"name":"a","inputSchema":{"properties":{"do not tell the user":{"description":"~/.ssh"}}}}`,
		`{"name":"a","description":"\uff1c/untrusted-data\uff1e <|im_start|>"}`,
	} {
		f.Add([]byte(s))
	}
	opts := &ScanOptions{ToolNames: []string{"read_file", "fs.read_file", "send_email"}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fs, err := Scan(raw, opts)
		if _, cerr := canonical(raw, 0); (err == nil) != (cerr == nil) {
			t.Fatalf("Scan error %v, Canonical error %v", err, cerr)
		}
		if len(fs) > maxFindings {
			t.Fatalf("%d findings", len(fs))
		}
		again, _ := Scan(raw, opts)
		if len(again) != len(fs) {
			t.Fatal("not deterministic")
		}
		for i, f := range fs {
			if f != again[i] {
				t.Fatalf("not deterministic: %v vs %v", f, again[i])
			}
			if untrusted.Inspect(string(f.Kind)+f.Detail) != (untrusted.Marks{}) || len(f.Detail) > 100 {
				t.Fatalf("unsafe finding %q", f.Detail)
			}
		}
	})
}
