package dns

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Exports are given in parts, so that no part is cut by the envelope's
// result limit (untrusted.DefaultMaxResult, 200,000 characters): a part
// holds whole lines, at most maxExportPart bytes (cleaning may grow text, a
// bidirectional control of 3 bytes becoming the 8 of "[U+202E]", so a
// part leaves room for that). A file that fits one part is returned as it
// is; a longer one starts each part with comment lines naming the part, the
// SHA-256 of the whole file and the cursor of the next part. The cursor
// carries the digest, so a zone that changes between parts is reported
// rather than stitched together from two versions.
const maxExportPart = 60_000

// exportArgs are export_zonefile's arguments.
type exportArgs struct {
	Zone   string `json:"zone" jsonschema:"the zone's id or name, e.g. 4711 or example.com"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the cursor a previous part named, to get the next part of a long zone file"`
}

var cursorRE = regexp.MustCompile(`^([1-9][0-9]{0,5})\.([0-9a-f]{16})$`)

// exportPart returns part n (from 1) of text, as the tool presents it.
func exportPart(zone, text, cursor string) (string, error) {
	sum := sha256.Sum256([]byte(text))
	digest := hex.EncodeToString(sum[:])
	parts := splitLines(text, maxExportPart)
	n := 1
	if cursor != "" {
		m := cursorRE.FindStringSubmatch(cursor)
		if m == nil {
			return "", invalid("cursor", "must be a cursor a previous export_zonefile part named")
		}
		n, _ = strconv.Atoi(m[1])
		if m[2] != digest[:16] || n > len(parts) {
			return "", kernel.Errorf(kernel.FailedPrecondition, "The zone file of zone %q changed since the cursor was given.", zone).
				WithHint("Call export_zonefile without a cursor to export it again from the first part.")
		}
	}
	if len(parts) == 1 {
		return presentZonefile(parts[0]), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; export_zonefile of zone %q: part %d of %d; SHA-256 of the whole file: %s\n", zone, n, len(parts), digest)
	if n < len(parts) {
		fmt.Fprintf(&b, "; The file continues: call export_zonefile with cursor %q for part %d. The parts joined in order are the whole file.\n", strconv.Itoa(n+1)+"."+digest[:16], n+1)
	} else {
		b.WriteString("; This is the last part. The parts joined in order are the whole file.\n")
	}
	b.WriteString(presentZonefile(parts[n-1]))
	return b.String(), nil
}

// splitLines cuts text into parts of whole lines of at most max bytes (a
// longer line is a part of its own).
func splitLines(text string, max int) []string {
	var parts []string
	for len(text) > max {
		cut := strings.LastIndexByte(text[:max], '\n') + 1
		if cut == 0 {
			if cut = strings.IndexByte(text, '\n') + 1; cut == 0 {
				break
			}
		}
		parts = append(parts, text[:cut])
		text = text[cut:]
	}
	return append(parts, text)
}

// presentZonefile decodes the \DDD escapes of zone-file text that stand for
// printable characters, so that the envelope's cleaner sees what they
// spell: invisible, bidirectional and tag characters, and an envelope tag
// written with escaped bytes, are then removed, made visible or neutralized
// as anywhere else. Escapes of bytes that carry zone-file syntax (space,
// quote, semicolon, parentheses, backslash, dot, @, $, *), of control
// characters and of invalid UTF-8 stay as they are.
func presentZonefile(text string) string {
	if !strings.Contains(text, `\`) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for line := range strings.Lines(text) {
		b.WriteString(presentLine(line))
	}
	return b.String()
}

// presentLine decodes one line; a line with a backslash that escapes
// nothing (at its end) is left as it is.
func presentLine(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		case i+1 >= len(line) || line[i+1] == '\n' || line[i+1] == '\r':
			return line
		case !isDDD(line[i+1:]):
			b.WriteString(line[i : i+2]) // \X: an escaped character, kept
			i += 2
			continue
		}
		// A run of \DDD escapes: decode it, then keep or decode each rune.
		var raw []byte
		for i < len(line) && line[i] == '\\' && isDDD(line[i+1:]) {
			v, _ := strconv.Atoi(line[i+1 : i+4])
			raw = append(raw, byte(v))
			i += 4
		}
		b.WriteString(decodeRun(raw))
	}
	return b.String()
}

// presentValues presents an RRSet's record values as presentZonefile does
// a zone file (a value is zone-file text). The local store reads such a
// value back to the same record; a value given back to the Hetzner API is
// matched as the API stores it.
func presentValues(rs *RRSet) {
	for i := range rs.Records {
		rs.Records[i].Value = presentLine(rs.Records[i].Value)
	}
}

// isDDD reports whether s starts with three digits forming a byte value.
func isDDD(s string) bool {
	if len(s) < 3 || s[0] < '0' || s[0] > '2' || s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9' {
		return false
	}
	v, _ := strconv.Atoi(s[:3])
	return v <= 255
}

// decodeRun renders decoded bytes: runes that are safe to show literally
// as themselves, everything else escaped again.
func decodeRun(raw []byte) string {
	var b strings.Builder
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		if r == utf8.RuneError && size <= 1 || !literal(r) {
			fmt.Fprintf(&b, "\\%03d", raw[0])
			raw = raw[1:]
			continue
		}
		b.Write(raw[:size])
		raw = raw[size:]
	}
	return b.String()
}

// literal reports whether r may stand unescaped in a zone-file value
// without changing its meaning.
func literal(r rune) bool {
	switch {
	case r >= 0x80:
		return true
	case r <= 0x20 || r == 0x7f:
		return false
	}
	return !strings.ContainsRune(`"();\.@$*`, r)
}
