package kernel

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// The bounds of the consent question (consentMessage): each argument's
// value is cut at maxConsentValue characters, at most maxConsentArgs
// arguments are listed, and the whole question is at most
// maxConsentMessage bytes.
const (
	maxConsentValue   = 200
	maxConsentArgs    = 20
	maxConsentMessage = 4096
	consentRefLen     = 16 // hex digits of the binding digest shown
)

// consentMessage is the question a person reads before a gated call runs,
// the same for every server: what the call does, then one fact a line —
//
//	Tool: delete_zone
//	Upstream: MCP server "fs" as its tool "write_file"  (a relayed call)
//	Target: path "/tmp/a"                                (when there is one)
//	Arguments:
//	  zone: example.com
//
// the preview's summary, whether it cannot be undone, and last the digest
// the answer is bound to as one short reference line. Every name and value
// is cleaned (untrusted.CleanString) and written on one line
// (untrusted.TerminalLine: a newline in a value cannot forge a line), each
// value cut at maxConsentValue characters, and the whole bounded.
func consentMessage(t *Tool, action string, args map[string]any, pv Preview, b confirm.Binding, bind string) string {
	var m strings.Builder
	fmt.Fprintf(&m, "An AI assistant asks to %s.\nTool: %s\n", oneLine(action), oneLine(t.name))
	if pv.Relay != "" {
		fmt.Fprintf(&m, "Upstream: %s\n", oneLine(pv.Relay))
	}
	if target := consentTarget(t, pv, b); target != "" {
		fmt.Fprintf(&m, "Target: %s\n", target)
	}
	writeArguments(&m, args)
	if pv.Summary != "" {
		m.WriteString(oneLine(pv.Summary) + "\n")
	}
	if t.policy.Destructive == Yes {
		m.WriteString("This removes or overwrites data and cannot be undone.\n")
	}
	m.WriteString("Accept only if you want exactly this; declining changes nothing.")
	ref := "\nReference: " + bind[:min(len(bind), consentRefLen)]
	body := m.String()
	if len(body)+len(ref) > maxConsentMessage {
		body = cutConsent(body, maxConsentMessage-len(ref)-len(consentCutMark))
	}
	return body + ref
}

const consentCutMark = "\n[the question was cut here: it is longer than this form shows]"

// cutConsent cuts s at n bytes, on a character boundary, and says so.
func cutConsent(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + consentCutMark
}

// consentTarget is the target line: the canonical form the preview gives,
// or else the bound target fields when the binding holds them (a preview's
// Target is a key, not meant to be read).
func consentTarget(t *Tool, pv Preview, b confirm.Binding) string {
	if pv.Canonical != "" {
		return oneLine(pv.Canonical)
	}
	fields := t.policy.Confirm.bind.Target
	if pv.Target != "" || len(fields) == 0 {
		return ""
	}
	return oneLine(cutValue(b.Target))
}

// writeArguments lists the arguments as "  name: value" lines, sorted by
// name, at most maxConsentArgs of them.
func writeArguments(m *strings.Builder, args map[string]any) {
	if len(args) == 0 {
		m.WriteString("Arguments: none\n")
		return
	}
	m.WriteString("Arguments:\n")
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	slices.Sort(names)
	for i, k := range names {
		if i == maxConsentArgs {
			fmt.Fprintf(m, "  … and %d more argument(s), not shown\n", len(names)-i)
			break
		}
		fmt.Fprintf(m, "  %s: %s\n", oneLine(cutValue(k)), oneLine(cutValue(argText(args[k]))))
	}
}

// argText is a value as a person reads it: a string as itself ("" when
// empty), anything else as canonical JSON.
func argText(v any) string {
	if s, ok := v.(string); ok {
		if s == "" {
			return `""`
		}
		return s
	}
	raw, err := confirm.CanonicalValue(v)
	if err != nil {
		return "[a value that cannot be shown]"
	}
	return string(raw)
}

// cutValue cuts s at maxConsentValue characters and says how many there are.
func cutValue(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= maxConsentValue {
		return s
	}
	i, k := 0, 0
	for k < maxConsentValue {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
		k++
	}
	return fmt.Sprintf("%s… [cut: %d of %d characters shown]", s[:i], maxConsentValue, n)
}

// oneLine is s cleaned and written on one line.
func oneLine(s string) string { return untrusted.TerminalLine(clean(s)) }
