package taint

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// A Finding is one thing a client received that it must not have.
type Finding struct {
	Path    string // where in the message ("result/content/0/text")
	Field   string // the hostile value's field, when one is in the string
	Problem string
	Sample  string // the string, cut and quoted
}

func (f Finding) String() string {
	return fmt.Sprintf("%s [%s]: %s: %s", f.Path, f.Field, f.Problem, f.Sample)
}

// Checker reads what a client received. Its checks share no code with the
// egress gate but untrusted.Inspect, the tag detector, used as the oracle
// of look-alike tags.
type Checker struct {
	Secret   string
	Visited  map[string]bool // fields whose hostile values arrived
	Findings []Finding
	Messages int
}

// NewChecker returns a Checker for secret.
func NewChecker(secret string) *Checker {
	return &Checker{Secret: secret, Visited: map[string]bool{}}
}

// Lines checks every JSON message of a stdio stream, one a line.
func (c *Checker) Lines(b []byte) {
	for line := range bytes.Lines(b) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			c.Message(line)
		}
	}
}

// Body checks an HTTP response body: one JSON message, or an event
// stream's data lines.
func (c *Checker) Body(contentType string, b []byte) {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		if len(bytes.TrimSpace(b)) > 0 {
			c.Message(b)
		}
		return
	}
	for line := range bytes.Lines(b) {
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if data = bytes.TrimSpace(data); len(data) > 0 {
				c.Message(data)
			}
		}
	}
}

// Text checks text that is not a message (a log), for the secret only.
func (c *Checker) Text(where, s string) {
	for line := range strings.Lines(s) {
		if form := c.secretIn(line); form != "" {
			c.Findings = append(c.Findings, Finding{Path: where, Problem: "the secret, " + form, Sample: cut(line)})
		}
	}
}

// Message checks one JSON-RPC message.
func (c *Checker) Message(msg []byte) {
	c.Messages++
	var v any
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		c.Findings = append(c.Findings, Finding{Path: "(message)", Problem: "not JSON: " + err.Error(), Sample: cut(string(msg))})
		return
	}
	c.walk(v, nil)
}

func (c *Checker) walk(v any, path []string) {
	switch x := v.(type) {
	case string:
		c.str(path, x)
	case json.Number:
		c.str(path, x.String())
	case []any:
		for i, e := range x {
			c.walk(e, append(path, strconv.Itoa(i)))
		}
	case map[string]any:
		for k, e := range x {
			c.str(append(path, "(key)"), k)
			c.walk(e, append(path, k))
		}
	}
}

var tokenRE = regexp.MustCompile(`@@([A-Za-z]+\.[A-Za-z_$./:-]+)@@`)

// exempt are the members a client matches byte for byte, which the gate
// leaves alone.
func exempt(p string) bool {
	switch p {
	case "jsonrpc", "id", "method", "params/progressToken", "params/requestId", "params/_meta/progressToken":
		return true
	}
	return false
}

// enveloped reports a tool result's text, or a prompt message's, where the
// envelope's own tags stand.
func enveloped(path []string) bool {
	return len(path) == 4 && path[0] == "result" && (path[1] == "content" || path[1] == "contents") && path[3] == "text" ||
		len(path) == 5 && path[0] == "result" && path[1] == "messages" && path[3] == "content" && path[4] == "text"
}

func (c *Checker) str(path []string, s string) {
	p := strings.Join(path, "/")
	field := ""
	visit := func(text string) {
		for _, m := range tokenRE.FindAllStringSubmatch(text, -1) {
			f, _, _ := strings.Cut(m[1], "/")
			c.Visited[f] = true
			field = m[1]
		}
	}
	visit(s)
	for _, run := range b64Runs(s) { // image and blob data
		if b, err := base64.StdEncoding.DecodeString(run); err == nil {
			visit(string(b))
		}
	}
	if exempt(p) {
		return
	}
	add := func(problem string) {
		c.Findings = append(c.Findings, Finding{Path: p, Field: field, Problem: problem, Sample: cut(s)})
	}
	if form := c.secretIn(s); form != "" {
		add("the secret, " + form)
	}
	for _, r := range s {
		if hidden(r) {
			add(fmt.Sprintf("a character that should have been cleaned (%U)", r))
			break
		}
	}
	tags := untrusted.Inspect(s).Tags
	if enveloped(path) {
		own := envelopeTags(s)
		if tags != len(own) {
			add(fmt.Sprintf("%d envelope tag(s), %d of them the envelope's own", tags, len(own)))
		}
		if field != "" && !tokensInside(s, own) {
			add("upstream text outside the envelope")
		}
		return
	}
	if tags > 0 || strings.Contains(strings.ToLower(s), "</untrusted-data") {
		add("an envelope tag outside the envelope")
	}
}

// hidden reports a character a reader does not see or that reorders what
// it sees: format characters, the other default-ignorables, variation
// selectors, controls but tab and newlines.
func hidden(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// visibleMarker is what CleanString writes for a bidirectional control.
var visibleMarker = regexp.MustCompile(`\[U\+[0-9A-F]{4,6}\]`)

func strip(s string) string {
	s = visibleMarker.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if hidden(r) {
			return -1
		}
		return r
	}, s)
}

var (
	uEscape   = regexp.MustCompile(`\\u([0-9a-fA-F]{4})`)
	pctEscape = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
)

// b64Runs returns the runs of 16 or more characters of either base64
// alphabet in s, longest first from the left: what the regular expression
// [A-Za-z0-9+/_=-]{16,} finds, without its cost on every string.
func b64Runs(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && b64Char(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 16 {
			out = append(out, s[start:i])
		}
		start = -1
	}
	return out
}

func b64Char(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '_' || c == '=' || c == '-'
}

// decodeEscapes decodes \uXXXX and %XX and the JSON escapes of quotes and
// slashes, with regular expressions (the gate decodes by hand).
func decodeEscapes(s string) string {
	s = uEscape.ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseUint(m[2:], 16, 32)
		return string(rune(v))
	})
	s = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\/`, `/`).Replace(s)
	return pctEscape.ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseUint(m[1:], 16, 8)
		return string([]byte{byte(v)})
	})
}

// secretIn returns how s holds the secret — in which decoding — or "".
func (c *Checker) secretIn(s string) string {
	for _, v := range []struct{ name, text string }{
		{"as it is", s},
		{"with hidden characters removed", strip(s)},
		{"with escapes decoded", strip(decodeEscapes(strip(s)))},
	} {
		if strings.Contains(v.text, c.Secret) {
			return v.name
		}
		// Every prefix of 4 or more starts with the first 4 characters.
		for k := len(c.Secret) - 1; k >= 4 && strings.Contains(v.text, c.Secret[:4]); k-- {
			p := c.Secret[:k]
			if strings.Contains(v.text, p+"…") || strings.Contains(v.text, p+"\n[truncated:") {
				return "a prefix before a cut, " + v.name
			}
		}
		for _, run := range b64Runs(v.text) {
			if base64Holds(run, c.Secret) {
				return "base64-encoded, " + v.name
			}
		}
	}
	return ""
}

// base64Holds decodes run at every offset in both alphabets and looks for
// secret in what comes out.
func base64Holds(run, secret string) bool {
	run = strings.TrimRight(run, "=")
	for off := range 4 {
		if off >= len(run) {
			break
		}
		w := run[off:]
		w = w[:len(w)/4*4]
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if b, err := enc.DecodeString(w); err == nil && bytes.Contains(b, []byte(secret)) {
				return true
			}
		}
	}
	return false
}

// envelopeTags returns the [start, end) of the exact envelope tags of s:
// an opening tag at a line start, then a closing tag at a line start.
func envelopeTags(s string) [][2]int {
	var out [][2]int
	open := -1
	for i := 0; i < len(s); i++ {
		if s[i] != '<' || (i > 0 && s[i-1] != '\n') {
			continue
		}
		switch {
		case open < 0 && strings.HasPrefix(s[i:], `<untrusted-data source="`):
			if j := strings.Index(s[i:], "\">\n"); j > 0 {
				out = append(out, [2]int{i, i + j + 3})
				open = i
			}
		case open >= 0 && strings.HasPrefix(s[i:], "</untrusted-data>"):
			out = append(out, [2]int{i, i + len("</untrusted-data>")})
			open = -1
		}
	}
	if open >= 0 {
		out = out[:len(out)-1]
	}
	return out
}

// tokensInside reports whether every hostile token of s stands inside one
// of its envelopes.
func tokensInside(s string, tags [][2]int) bool {
	for _, loc := range tokenRE.FindAllStringIndex(s, -1) {
		in := slices.ContainsFunc(pairs(tags), func(p [2]int) bool { return p[0] <= loc[0] && loc[1] <= p[1] })
		if !in {
			return false
		}
	}
	return true
}

func pairs(tags [][2]int) [][2]int {
	var out [][2]int
	for i := 0; i+1 < len(tags); i += 2 {
		out = append(out, [2]int{tags[i][1], tags[i+1][0]})
	}
	return out
}

func cut(s string) string {
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return strconv.Quote(s)
}
