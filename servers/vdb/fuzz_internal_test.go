package vdb

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

// FuzzParseCredential: an accepted credential is a single-line header of
// one of the two schemes, each of its secret parts can be registered, and
// the egress gate removes them from a message.
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
		sec := egress.NewSecrets(c.secrets...)
		for _, part := range c.secrets {
			if err := egress.CheckSecret(part); err != nil {
				t.Fatalf("%q: secret part of %d bytes: %v", v, len(part), err)
			}
		}
		msg := `{"result":{"structuredContent":{"echo":` + strconv.Quote(c.header) + `}}}`
		clean, _, err := egress.Message([]byte(msg), sec)
		if err != nil {
			t.Fatalf("gate: %v", err)
		}
		for _, part := range c.secrets {
			if !strings.Contains(egress.Redacted, part) && strings.Contains(string(clean), part) {
				t.Fatalf("%q: the gate left %q", v, part)
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
