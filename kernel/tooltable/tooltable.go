// Package tooltable renders tool declarations as the Markdown table of a
// README or a docs/tools-*.md page. Generated from the declarations, the
// documentation cannot drift from them; each server's tests (and
// internal/cli's README test) compare the files with it.
package tooltable

import (
	"fmt"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Markdown renders tools as a Markdown table: the name, the first sentence
// of the description, the behaviour hints and the confirmation gate
// (kernel.Gate's String).
func Markdown(tools []kernel.Tool) string {
	var b strings.Builder
	b.WriteString("| Tool | What it does | Read-only | Destructive | Idempotent | Confirmation |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, t := range tools {
		p := t.Policy()
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", t.Name(), firstSentence(t.Description()),
			p.ReadOnly, p.Destructive, p.Idempotent, p.Confirm)
	}
	return b.String()
}

// firstSentence is a description's first sentence, with pipes escaped.
func firstSentence(d string) string {
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return strings.ReplaceAll(d, "|", `\|`)
}
