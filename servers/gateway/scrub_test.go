package gateway

import (
	"bufio"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestScrubberRemovesKnownValuesAndAssignments(t *testing.T) {
	s := &scrubber{}
	s.add("s3cr3t-value-123")
	s.add("short") // too short to scrub safely
	cases := map[string]string{
		"token is s3cr3t-value-123 here": "token is [redacted] here",
		"api_key=abcdef123456":           "api_key=[redacted]",
		`"password": "hunter2hunter2"`:   `"password": "[redacted]"`,
		"Authorization: Bearer abcdefgh": "Authorization: Bearer [redacted]",
		"nothing secret here":            "nothing secret here",
	}
	for in, want := range cases {
		if got := s.text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadLineCutsLongLines(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 1<<20)+"\nnext\n"), 4096)
	line, err := readLine(br)
	if err != nil || len(line) != stderrLineBytes {
		t.Fatalf("long line: %d bytes, %v", len(line), err)
	}
	if line, _ := readLine(br); line != "next" {
		t.Fatalf("after a long line: %q", line)
	}
}

func FuzzScrubber(f *testing.F) {
	f.Add("token=abcdef123456 and s3cr3t-value-123", "s3cr3t-value-123")
	f.Add("Authorization: Bearer xyz", "xyzxyzxyz")
	f.Fuzz(func(t *testing.T, text, secret string) {
		s := &scrubber{}
		s.add(secret)
		out := s.text(text)
		if len(secret) >= 6 && !strings.Contains(strings.ReplaceAll(secret, "[redacted]", ""), "[redacted]") &&
			strings.Contains(out, secret) && !strings.Contains(secret, "redacted") {
			t.Fatalf("the secret %q survives in %q", secret, out)
		}
	})
}

// TestScrubberFindsEncodedForms: a known credential is removed from a log
// line in the forms the kernel's scrubber finds (JSON-escaped, base64 as
// in an echoed Basic header), not only as written.
func TestScrubberFindsEncodedForms(t *testing.T) {
	s := &scrubber{}
	secret := "s3cr3t/value+12345<x>"
	s.add(secret)
	for _, line := range []string{
		"sent Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+secret)),
		`{"v":"s3cr3t/value+12345\u003cx\u003e"}`,
	} {
		if out := s.text(line); !strings.Contains(out, "[redacted]") || strings.Contains(out, "MTIzNDU") || strings.Contains(out, "value+12345") {
			t.Errorf("text(%q) = %q", line, out)
		}
	}
}

// TestQuestionHoldingAKnownSecretIsNotRelayed: an upstream's question
// that carries a credential the gateway knows (a child's secret variable)
// is refused before the client is asked — in the encoded forms too — while
// an ordinary question that mentions a password is relayed.
func TestQuestionHoldingAKnownSecretIsNotRelayed(t *testing.T) {
	g := &Gateway{scrub: &scrubber{}}
	g.scrub.add("child-api-key-0123456789")
	for _, msg := range []string{
		"paste child-api-key-0123456789 here",
		"Basic " + base64.StdEncoding.EncodeToString([]byte("u:child-api-key-0123456789")),
	} {
		if err := g.holdsSecret(&mcp.ElicitParams{Message: msg}); err == nil {
			t.Errorf("relayed %q", msg)
		}
	}
	if err := g.holdsSecret(&mcp.ElicitParams{Message: "Choose a password carefully for the new account"}); err != nil {
		t.Errorf("an ordinary question was refused: %v", err)
	}
}
