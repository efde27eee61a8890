package kernel

import (
	"bytes"
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
// It finds each value in these forms: as it is, and JSON-encoded the way
// encoding/json and the envelope write it (with and without HTML escaping).
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
	}
	if len(forms) == 0 {
		return nil
	}
	slices.SortStableFunc(forms, func(a, b []byte) int { return len(b) - len(a) })
	return &scrubber{values: kept, forms: forms}
}

// with returns a scrubber that also removes values.
func (sc *scrubber) with(values ...string) *scrubber {
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
// least minCutPrefix bytes that b ends with, or 0.
func (sc *scrubber) prefixBefore(b []byte) int {
	best := 0
	for _, f := range sc.forms {
		for k := min(len(f)-1, len(b)); k >= minCutPrefix && k > best; k-- {
			if bytes.HasSuffix(b, f[:k]) {
				best = k
				break
			}
		}
	}
	return best
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

// record scrubs the free-text fields of an audit record.
func (sc *scrubber) record(rec *audit.Record) {
	if sc == nil {
		return
	}
	rec.ErrorCode = sc.String(rec.ErrorCode)
}

// callSecrets is the scrubber of one call: the server's configured
// credentials and, under BYOK, the values of the request's credential
// headers, whether or not the handler asked for them.
func (s *Server) callSecrets(c *Call) *scrubber {
	if !s.opts.BYOK || c.header == nil {
		return s.secrets
	}
	var vals []string
	for _, cr := range s.opts.Credentials {
		if v := strings.TrimSpace(c.header.Get(cr.Header)); v != "" {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return s.secrets
	}
	return s.secrets.with(vals...)
}
