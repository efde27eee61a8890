package pin

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Kind is what a Finding found.
type Kind string

// The kinds of Finding.
const (
	// kindHiddenInstruction: a phrase that addresses the model rather than
	// describing the tool ("ignore previous", "do not tell the user").
	kindHiddenInstruction Kind = "hidden-instruction"
	// kindPromptTag: a tag that imitates a prompt's structure (<IMPORTANT>,
	// <system>, <|im_start|>).
	kindPromptTag Kind = "prompt-tag"
	// kindInvisible: characters a person does not see (zero-width, tag
	// characters, controls), counted by untrusted.Inspect.
	kindInvisible Kind = "invisible-characters"
	// kindBidi: bidirectional controls that reorder what a person sees.
	kindBidi Kind = "bidi-controls"
	// kindEnvelopeTag: the untrusted-data envelope's own tag, look-alike
	// spellings included.
	kindEnvelopeTag Kind = "envelope-tag"
	// kindToolReference: the name of another tool the client sees.
	kindToolReference Kind = "tool-reference"
	// kindURL: a link, a way out for data.
	kindURL Kind = "url"
	// kindExfiltration: words about secrets or sending data out (~/.ssh,
	// private key, curl, webhook).
	kindExfiltration Kind = "exfiltration-hint"
)

// Finding is one suspicious thing in a tool definition.
type Finding struct {
	// Where is the member's path ("description",
	// "inputSchema.properties.path.description"); for a property's name
	// it ends in " (property name)".
	Where string `json:"where"`
	Kind  Kind   `json:"kind"`
	// Detail says what was found, cleaned and cut: it is safe to print.
	Detail string `json:"detail"`
}

func (f Finding) String() string { return f.Where + ": " + string(f.Kind) + ": " + f.Detail }

// maxFindings is the most findings Scan returns.
const maxFindings = 64

// ScanOptions configure Scan.
type ScanOptions struct {
	// ToolNames are the names of the tools a client sees (namespaced, and
	// bare if the gateway shows them so). Text naming one other than the
	// scanned tool itself is a kindToolReference. Names shorter than 3
	// characters are ignored.
	ToolNames []string
	// MaxDefinition bounds the definition as in Options.
	MaxDefinition int
}

// noText are schema members whose string values are machine words, not
// text a model reads as prose.
var noText = map[string]bool{"$schema": true, "$id": true, "$ref": true, "type": true, "format": true, "pattern": true}

// Scan looks through every text of a tool definition a model reads —
// name, title, description, annotations, _meta, and in the schemas every
// description, title, default, enum and example and every property name,
// at any depth — for hidden instructions, prompt-like tags, invisible or
// bidirectional characters, the envelope's tag, other tools' names, URLs
// and exfiltration hints. The work is linear in the definition's size,
// which is bounded before parsing. Findings are advice for the person who
// approves; a clean scan proves nothing (docs/gateway-pinning.md).
func Scan(tool json.RawMessage, opts *ScanOptions) ([]Finding, error) {
	var o ScanOptions
	if opts != nil {
		o = *opts
	}
	c, err := canonical(tool, o.MaxDefinition)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(c, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", errDefinition, err)
	}
	s := newScanner(o.ToolNames, v)
	s.walk("", v)
	return s.out, nil
}

type scanner struct {
	names map[string]bool // lower-cased tool names, the scanned tool's own left out
	seen  map[Finding]bool
	out   []Finding
}

func newScanner(toolNames []string, def any) *scanner {
	self := ""
	if m, ok := def.(map[string]any); ok {
		self, _ = m["name"].(string)
	}
	self = strings.ToLower(self)
	s := &scanner{names: map[string]bool{}, seen: map[Finding]bool{}}
	for _, n := range toolNames {
		n = strings.ToLower(n)
		if len(n) < 3 || self != "" && (n == self || strings.HasSuffix(n, "."+self) || strings.HasSuffix(n, "_"+self)) {
			continue
		}
		s.names[n] = true
	}
	return s
}

func (s *scanner) add(where string, k Kind, detail string) {
	if len(s.out) >= maxFindings {
		return
	}
	f := Finding{Where: where, Kind: k, Detail: detail}
	if !s.seen[f] {
		s.seen[f] = true
		s.out = append(s.out, f)
	}
}

func (s *scanner) walk(path string, v any) {
	switch v := v.(type) {
	case string:
		s.text(label(path), v)
	case []any:
		for i, x := range v {
			s.walk(path+"["+strconv.Itoa(i)+"]", x)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		props := strings.HasSuffix(path, "properties") || strings.HasSuffix(path, "patternProperties")
		for _, k := range keys {
			p := join(path, k)
			if props {
				s.text(p+" (property name)", k)
			} else if noText[k] {
				continue
			}
			s.walk(p, v[k])
		}
	}
}

// text scans one string.
func (s *scanner) text(where, t string) {
	if t == "" {
		return
	}
	m := untrusted.Inspect(t)
	if m.Invisible > 0 {
		s.add(where, kindInvisible, fmt.Sprintf("%d invisible character(s): zero-width, tag or control", m.Invisible))
	}
	if m.Bidi > 0 {
		s.add(where, kindBidi, fmt.Sprintf("%d bidirectional control(s) that reorder the text", m.Bidi))
	}
	if m.Tags > 0 {
		s.add(where, kindEnvelopeTag, "the untrusted-data envelope's tag")
	}
	n := normalize(t)
	for _, p := range hiddenPhrases {
		if containsWord(n, p) {
			s.add(where, kindHiddenInstruction, strconv.Quote(p))
		}
	}
	for _, p := range exfilPhrases {
		if containsWord(n, p) {
			s.add(where, kindExfiltration, strconv.Quote(strings.TrimSpace(p)))
		}
	}
	s.tags(where, n)
	s.urls(where, n)
	s.tools(where, n)
}

// normalize is t as a model reads it, for phrase matching: invisible
// characters removed (untrusted.CleanString), lower case, typographic
// apostrophes straightened, every run of white space one space.
func normalize(t string) string {
	t = strings.ToLower(untrusted.CleanString(t))
	var b strings.Builder
	b.Grow(len(t))
	space := false
	for _, r := range t {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case r == '\u2019' || r == '\u2018' || r == '`':
			r = '\''
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// containsWord reports whether p occurs in n at the start of a word (a
// phrase that starts with a letter does not match inside a word: "act as"
// is not found in "exact assignment").
func containsWord(n, p string) bool {
	for off := 0; ; {
		i := strings.Index(n[off:], p)
		if i < 0 {
			return false
		}
		i += off
		if i == 0 || !isLetter(p[0]) || !isLetter(n[i-1]) {
			return true
		}
		off = i + 1
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 }

// tags reports <word>, </word> and <|word|> where word is a prompt
// structure's name.
func (s *scanner) tags(where, n string) {
	for i := 0; i < len(n); i++ {
		if n[i] != '<' {
			continue
		}
		j := i + 1
		for j < len(n) && (n[j] == '/' || n[j] == '|' || n[j] == '<' || n[j] == ' ') {
			j++
		}
		k := j
		for k < len(n) && (n[k] >= 'a' && n[k] <= 'z' || n[k] == '_' || n[k] == '-') {
			k++
		}
		if k > j && k-j <= 20 && promptTags[n[j:k]] {
			s.add(where, kindPromptTag, strconv.Quote("<"+n[i+1:k]+">"))
		}
	}
}

// urls reports each distinct link's scheme and host.
func (s *scanner) urls(where, n string) {
	for _, scheme := range []string{"https://", "http://", "file://", "ftp://", "ws://", "wss://"} {
		for rest := n; ; {
			i := strings.Index(rest, scheme)
			if i < 0 {
				break
			}
			rest = rest[i+len(scheme):]
			host := rest
			if j := strings.IndexAny(host, "/?#\"' )]>,;"); j >= 0 {
				host = host[:j]
			}
			s.add(where, kindURL, strconv.Quote(cut(scheme+host, 80)))
		}
	}
}

// tools reports words that are another tool's name.
func (s *scanner) tools(where, n string) {
	if len(s.names) == 0 {
		return
	}
	word := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '/'
	}
	for i := 0; i < len(n); {
		if !word(n[i]) {
			i++
			continue
		}
		j := i
		for j < len(n) && word(n[j]) {
			j++
		}
		w := strings.TrimRight(n[i:j], ".-/")
		if s.names[w] {
			s.add(where, kindToolReference, strconv.Quote(w))
		}
		i = j
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
