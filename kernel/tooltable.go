package kernel

import (
	"fmt"
	"strings"
)

// ToolTable renders tools as a Markdown table for a README: the name, the
// first sentence of the description, the behaviour hints and the
// confirmation gate. Generated from the declarations, the documentation
// cannot drift from them; each server's tests compare it with the file.
func ToolTable(tools []Tool) string {
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

func yesNo(h Hint) string {
	switch h {
	case Yes:
		return "yes"
	case No:
		return "no"
	}
	return "unset"
}

// gateText describes a gate: "—", "always", "always; bound to `records`",
// or a conditional gate's condition.
func gateText(g Gate) string {
	var kind string
	switch g.mode {
	case gateNever:
		return "—"
	case gateAlways:
		kind = "always"
	case gateWhen:
		kind = "conditional"
	default:
		return "unset"
	}
	if g.condition != "" {
		kind = g.condition
	}
	if len(g.bind.Payload) == 0 {
		return kind
	}
	fields := make([]string, len(g.bind.Payload))
	for i, f := range g.bind.Payload {
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
