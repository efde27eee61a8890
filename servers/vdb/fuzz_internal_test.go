package vdb

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// FuzzParseCredential: an accepted credential is a single-line header of
// one of the two schemes, and scrubbing removes it from any body.
func FuzzParseCredential(f *testing.F) {
	for _, s := range []string{"11111111-1111-4111-8111-111111111111:abcdef", "ApiKey o:h", "Bearer t", "bearer  x",
		"11111111-1111-4111-8111-111111111111:11111111-1111-4111-8111-111111111111:ab", "Basic x", "a\nb", `tok"en`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c, err := parseCredential(v)
		if err != nil {
			return
		}
		if !strings.HasPrefix(c.header, "ApiKey ") && !strings.HasPrefix(c.header, "Bearer ") {
			t.Fatalf("%q: header %q", v, c.header)
		}
		if strings.ContainsAny(c.header[7:], " \r\n\t\"\\") || strings.ContainsFunc(c.header, func(r rune) bool { return r < 0x20 || r >= 0x7f }) {
			t.Fatalf("%q: header %q", v, c.header)
		}
		body := []byte(`{"echo":"` + c.header + `"}`)
		clean, _ := (&kernel.Call{}).Scrub(body, c.secrets...)
		for _, sec := range c.secrets {
			if len(sec) < minScrub {
				t.Fatalf("%q: secret part %q is shorter than %d bytes", v, sec, minScrub)
			}
			if !strings.Contains("[redacted]", sec) && strings.Contains(string(clean), sec) {
				t.Fatalf("%q: scrub left %q", v, sec)
			}
		}
	})
}

// FuzzSummarize: any upstream body summarises or fails cleanly, and a
// summary is valid JSON no larger than what it summarises plus its frame.
func FuzzSummarize(f *testing.F) {
	for _, s := range []string{`{"id":"CVE-1","descriptions":[{"lang":"en","value":"x"}],"references":[{"url":"u"}]}`,
		`{"description":"` + strings.Repeat("a", 3000) + `","affected":[1,2,3]}`, `[]`, `{"metrics":[[[[[[]]]]]]}`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sum, err := summarize(body)
		if err != nil {
			return
		}
		b, err := json.Marshal(sum)
		if err != nil {
			t.Fatalf("summary does not encode: %v", err)
		}
		if len(b) > 2*len(body)+4096 {
			t.Fatalf("summary of %d bytes is %d bytes", len(body), len(b))
		}
	})
}

// FuzzParseAnalysis: an accepted model answer holds exactly the schema's
// members within their bounds.
func FuzzParseAnalysis(f *testing.F) {
	for _, s := range []string{`{"summary":"s","risk":"low","steps":["a"]}`, `{"summary":"s","risk":"low","steps":[],"tool":"x"}`,
		`{"summary":"s","risk":"nope","steps":[]}`, `{"summary":"s","risk":"low","steps":[]} {}`, "```json\n{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		a, err := parseAnalysis(content)
		if err != nil {
			return
		}
		if utf8.RuneCountInString(*a.Summary) > aiMaxSummaryRunes || len(*a.Steps) > aiMaxSteps || !oneOf(*a.Risk, aiRisks) {
			t.Fatalf("accepted out of bounds: %q", content)
		}
	})
}
