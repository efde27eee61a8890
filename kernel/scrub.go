package kernel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// A scrubber removes the credential values in play for one call — the
// server's configured credentials and the caller's BYOK credentials — from
// everything that leaves the kernel: results (text and structuredContent),
// errors, progress and log notifications, log lines and audit records. It
// runs after the envelope has cleaned the text, so an upstream cannot hide a
// credential from it with invisible characters or JSON escapes: what it
// looks for is what a client would read.
//
// It finds each value in these forms: as it is, JSON-encoded the way
// encoding/json and the envelope write it (with and without HTML escaping),
// and, for values of 12 bytes or more, base64-encoded (standard and URL
// alphabets, at any offset inside a longer base64 text).
// It also removes a prefix of a value (minCutPrefix bytes or more) that
// ends where the envelope or the error sanitizer cut a string ("…" or
// "\n[truncated: "), so that an upstream cannot leak a credential piece by
// piece through cuts placed at chosen lengths. It does not find a credential
// the upstream transformed otherwise (base64, hex, reversed, split across
// fields): an upstream that holds the credential can always encode it; the
// scrubber stops the echo, not a deliberate exfiltration by that upstream.
type scrubber struct {
	values []string
	forms  [][]byte // longest first
	fail   [][]int  // each form's prefix function
}

// minBase64Secret is the shortest credential also looked for in base64:
// the part of its encoding that does not depend on its neighbours is then
// at least 14 characters long, too long to match by chance.
const minBase64Secret = 12

// base64Core is the part of the base64 encoding of v, preceded by k other
// bytes, that depends on v alone: it is found inside any base64 text that
// encodes v at an offset of k modulo 3 (an "Authorization: Basic" value
// echoed back, say).
func base64Core(enc *base64.Encoding, v string, k int) []byte {
	buf := make([]byte, k+len(v))
	copy(buf[k:], v)
	s := enc.EncodeToString(buf)
	first, last := (8*k+5)/6, 8*(k+len(v))/6
	return []byte(s[first:last])
}

// minCutPrefix is the shortest credential prefix removed before a cut.
const minCutPrefix = 4

// cutMarkers are what the envelope and upstream.SanitizeErrorMessage write
// where they cut text.
var cutMarkers = [][]byte{[]byte("…"), []byte("\n[truncated: ")}

var redactedBytes = []byte(untrusted.Redacted)

// newScrubber returns a scrubber for the non-empty values, or nil when there
// are none (a nil scrubber changes nothing).
func newScrubber(values ...string) *scrubber {
	var forms [][]byte
	var kept []string
	add := func(f []byte) {
		if len(f) > 0 && !slices.ContainsFunc(forms, func(g []byte) bool { return bytes.Equal(f, g) }) {
			forms = append(forms, f)
		}
	}
	for _, v := range values {
		if v == "" || slices.Contains(kept, v) {
			continue
		}
		kept = append(kept, v)
		add([]byte(v))
		for _, html := range []bool{true, false} {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(html)
			if enc.Encode(v) == nil {
				add(bytes.TrimSuffix(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte(`"`))[1:])
			}
		}
		if len(v) >= minBase64Secret {
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				for k := range 3 {
					add(base64Core(enc, v, k))
				}
			}
		}
	}
	if len(forms) == 0 {
		return nil
	}
	slices.SortStableFunc(forms, func(a, b []byte) int { return len(b) - len(a) })
	sc := &scrubber{values: kept, forms: forms}
	for _, f := range forms {
		sc.fail = append(sc.fail, failure(f))
	}
	return sc
}

// with returns a scrubber that also removes values.
func (sc *scrubber) with(values ...string) *scrubber {
	if len(values) == 0 {
		return sc
	}
	if sc == nil {
		return newScrubber(values...)
	}
	return newScrubber(append(slices.Clone(sc.values), values...)...)
}

// bytes returns b with every form and cut prefix replaced by [redacted], and
// how many replacements it made. b is not modified.
func (sc *scrubber) bytes(b []byte) ([]byte, int) {
	if sc == nil {
		return b, 0
	}
	n := 0
	for _, f := range sc.forms {
		if c := bytes.Count(b, f); c > 0 {
			b = bytes.ReplaceAll(b, f, redactedBytes)
			n += c
		}
	}
	for _, m := range cutMarkers {
		var k int
		b, k = sc.cutPrefixes(b, m)
		n += k
	}
	return b, n
}

// cutPrefixes replaces a credential prefix that ends right before marker.
func (sc *scrubber) cutPrefixes(b, marker []byte) ([]byte, int) {
	if !bytes.Contains(b, marker) {
		return b, 0
	}
	var out []byte
	n, last := 0, 0
	for i := 0; ; {
		j := bytes.Index(b[i:], marker)
		if j < 0 {
			break
		}
		at := i + j
		if p := sc.prefixBefore(b[last:at]); p > 0 {
			out = append(append(out, b[last:at-p]...), redactedBytes...)
			last = at
			n++
		}
		i = at + len(marker)
	}
	if n == 0 {
		return b, 0
	}
	return append(out, b[last:]...), n
}

// prefixBefore returns the length of the longest credential prefix of at
// least minCutPrefix bytes that b ends with, or 0. It runs each form's
// prefix automaton over the last bytes of b: linear in the form's length,
// so text full of cut markers costs little.
func (sc *scrubber) prefixBefore(b []byte) int {
	best := 0
	for i, f := range sc.forms {
		pi := sc.fail[i]
		q := 0
		for _, c := range b[max(0, len(b)-len(f)):] {
			for q > 0 && (q == len(f) || f[q] != c) {
				q = pi[q-1]
			}
			if f[q] == c {
				q++
			}
		}
		if q >= minCutPrefix && q > best {
			best = q
		}
	}
	return best
}

// failure is the prefix function of f (Knuth-Morris-Pratt): pi[i] is the
// length of the longest proper prefix of f[:i+1] that is also its suffix.
func failure(f []byte) []int {
	pi := make([]int, len(f))
	for i, k := 1, 0; i < len(f); i++ {
		for k > 0 && f[k] != f[i] {
			k = pi[k-1]
		}
		if f[k] == f[i] {
			k++
		}
		pi[i] = k
	}
	return pi
}

// String scrubs s.
func (sc *scrubber) String(s string) string {
	if sc == nil {
		return s
	}
	b, n := sc.bytes([]byte(s))
	if n == 0 {
		return s
	}
	return string(b)
}

// result scrubs every text a result carries. It returns the number of
// replacements, and false when structured content could not be scrubbed
// without breaking it (a credential that matched JSON syntax).
func (sc *scrubber) result(res *mcp.CallToolResult) (int, bool) {
	if sc == nil || res == nil {
		return 0, true
	}
	total := 0
	for i, c := range res.Content {
		switch b := c.(type) {
		case *mcp.TextContent:
			t, n := sc.bytes([]byte(b.Text))
			if n > 0 {
				res.Content[i] = &mcp.TextContent{Text: string(t), Meta: b.Meta, Annotations: b.Annotations}
				total += n
			}
		case *mcp.EmbeddedResource:
			if b.Resource != nil && b.Resource.Text != "" {
				t, n := sc.bytes([]byte(b.Resource.Text))
				if n > 0 {
					r := *b.Resource
					r.Text = string(t)
					res.Content[i] = &mcp.EmbeddedResource{Resource: &r, Meta: b.Meta, Annotations: b.Annotations}
					total += n
				}
			}
		}
	}
	if res.StructuredContent == nil {
		return total, true
	}
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			return total, false
		}
	}
	clean, n := sc.bytes(raw)
	if n == 0 {
		return total, true
	}
	if !json.Valid(clean) {
		return total + n, false
	}
	res.StructuredContent = json.RawMessage(clean)
	return total + n, true
}

// Scrub returns b with the credentials in play for the call removed, the
// way the kernel removes them from the call's result (as they are,
// JSON-escaped, base64-encoded, a prefix before a cut), together with more:
// credential values the server holds or derives itself, such as a key a
// sign-in stored or the secret part of a header, which the kernel cannot
// know. Each becomes untrusted.Redacted. It returns how many replacements it
// made; b is not modified. A server calls it on an upstream answer before
// it decodes or caches it, so that an echoed credential is never kept.
func (c *Call) Scrub(b []byte, more ...string) ([]byte, int) {
	return c.secrets.with(more...).bytes(b)
}

// record scrubs the free-text fields of an audit record.
func (sc *scrubber) record(rec *audit.Record) {
	if sc == nil {
		return
	}
	rec.ErrorCode = sc.String(rec.ErrorCode)
	for k, v := range rec.Attrs {
		rec.Attrs[k] = sc.String(v)
	}
}

// callSecrets is the scrubber of one call: the server's configured
// credentials and, under BYOK, the values of the request's credential
// headers, whether or not the handler asked for them.
func (s *Server) callSecrets(c *Call) *scrubber {
	if !s.opts.BYOK || c.header == nil {
		return s.secrets()
	}
	var vals []string
	for _, cr := range s.opts.Credentials {
		if v := strings.TrimSpace(c.header.Get(cr.Header)); v != "" {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return s.secrets()
	}
	return s.secrets().with(vals...)
}

// Scrubber is the kernel's credential scrubber for text that leaves outside
// a call — a child process's log line, a connection's error — so that a
// server never needs a second one: it finds each value in every form the
// kernel finds it in results (as it is, JSON-escaped, base64, a prefix
// before a cut). The zero value and nil remove nothing.
type Scrubber struct{ sc *scrubber }

// NewScrubber returns a Scrubber for the non-empty values.
func NewScrubber(values ...string) *Scrubber { return &Scrubber{sc: newScrubber(values...)} }

// With returns a Scrubber that also removes values; s is unchanged.
func (s *Scrubber) With(values ...string) *Scrubber {
	if s == nil {
		return NewScrubber(values...)
	}
	return &Scrubber{sc: s.sc.with(values...)}
}

// String returns t with every form of every value replaced by [redacted].
func (s *Scrubber) String(t string) string {
	if s == nil {
		return t
	}
	return s.sc.String(t)
}
