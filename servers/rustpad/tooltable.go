package rustpad

import (
	"fmt"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// ToolTable renders tools as a Markdown table for the documentation: name,
// first sentence of the description, the three behaviour hints and the
// confirmation gate. It is generated from the declarations, so the
// documentation cannot drift from them (a test compares docs/tools-rustpad.md).
func ToolTable(tools []kernel.Tool) string {
	var b strings.Builder
	b.WriteString("| Tool | What it does | Read-only | Destructive | Idempotent | Confirmation |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, t := range tools {
		p := t.Policy()
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", t.Name(), firstSentence(t.Description()),
			yesNo(p.ReadOnly), yesNo(p.Destructive), yesNo(p.Idempotent), gateText(p.Confirm))
	}
	return b.String()
}

func yesNo(h kernel.Hint) string {
	switch h {
	case kernel.Yes:
		return "yes"
	case kernel.No:
		return "no"
	}
	return "unset"
}

// gateText describes a gate: "—", "always", "always; bound to `text`".
func gateText(g kernel.Gate) string {
	kind, bound, hasBound := strings.Cut(g.String(), ", bound to ")
	if kind == "never" {
		return "—"
	}
	if !hasBound {
		return kind
	}
	fields := strings.Fields(strings.Trim(bound, "[]"))
	for i, f := range fields {
		fields[i] = "`" + f + "`"
	}
	return kind + "; bound to " + strings.Join(fields, ", ")
}

// firstSentence is a description's first sentence, with pipes escaped.
func firstSentence(d string) string {
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return strings.ReplaceAll(d, "|", `\|`)
}
