package egress

import "strings"

// headLen is the length of the head every long form is indexed by.
const headLen = 8

// A matcher finds every form in a text in one pass: each position's next
// eight bytes are hashed and tested against a 64 Kibit filter of the long
// forms' heads, so text that holds none costs about a nanosecond a byte
// whatever the number of forms; forms shorter than a head are found with
// bytes.Index.
type matcher struct {
	forms [][]byte // longest first
	fail  [][]int  // each form's prefix function (cut prefixes)
	heads map[uint64][]int32
	bits  [1 << 10]uint64 // filter: bit hash16(head)
	short []int32         // forms shorter than headLen
	// shortest is the length of the shortest form
	shortest int
}

func newMatcher(forms [][]byte) *matcher {
	m := &matcher{forms: forms, heads: map[uint64][]int32{}, shortest: len(forms[len(forms)-1])}
	for i, f := range forms {
		m.fail = append(m.fail, failure(f))
		if len(f) < headLen {
			m.short = append(m.short, int32(i))
			continue
		}
		k := load64(string(f), 0)
		m.heads[k] = append(m.heads[k], int32(i)) // longest first, as forms
		h := hash16(k)
		m.bits[h>>6] |= 1 << (h & 63)
	}
	return m
}

func hash16(k uint64) uint32 { return uint32((k * 0x9E3779B97F4A7C15) >> 48) }

// span is a found secret: text[start:end].
type span struct{ start, end int }

// find appends the spans of text that hold a form, leftmost first and, at
// one position, the longest; spans do not overlap.
func (m *matcher) find(dst []span, text string) []span {
	if m == nil {
		return dst
	}
	for i := 0; i < len(text); {
		start, n := m.next(text, i)
		if n == 0 {
			break
		}
		dst = append(dst, span{start, start + n})
		i = start + n
	}
	return dst
}

// next returns the leftmost match at or after from (its start and length;
// length 0 for none).
func (m *matcher) next(text string, from int) (int, int) {
	bestAt, bestLen := -1, 0
	for _, fi := range m.short { // few or none: the kernel refuses short secrets
		if j := strings.Index(text[from:], string(m.forms[fi])); j >= 0 {
			if at := from + j; bestAt < 0 || at < bestAt || at == bestAt && len(m.forms[fi]) > bestLen {
				bestAt, bestLen = at, len(m.forms[fi])
			}
		}
	}
	last := len(text) - headLen
	if bestAt >= 0 {
		last = min(last, bestAt)
	}
	for i := from; i <= last; i++ {
		k := load64(text, i)
		h := hash16(k)
		if m.bits[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, fi := range m.heads[k] {
			if f := m.forms[fi]; strings.HasPrefix(text[i:], string(f)) {
				if i < bestAt || bestAt < 0 || len(f) > bestLen {
					return i, len(f)
				}
				break
			}
		}
	}
	if bestAt < 0 {
		return 0, 0
	}
	return bestAt, bestLen
}

// cutMarkers are what the envelope and upstream.SanitizeErrorMessage write
// where they cut text.
var cutMarkers = []string{"…", "\n[truncated: "}

// cuts appends a span for each form prefix of at least minCutPrefix bytes
// that text has right before a cut marker, so that an upstream cannot leak a
// secret piece by piece through cuts placed at chosen lengths.
func (m *matcher) cuts(dst []span, text string) []span {
	if m == nil {
		return dst
	}
	for _, mark := range cutMarkers {
		for i := 0; ; {
			j := strings.Index(text[i:], mark)
			if j < 0 {
				break
			}
			at := i + j
			if p := m.prefixBefore(text[:at]); p > 0 {
				dst = append(dst, span{at - p, at})
			}
			i = at + len(mark)
		}
	}
	return dst
}

// prefixBefore returns the length of the longest form prefix of at least
// minCutPrefix bytes that b ends with, or 0. It runs each form's prefix
// automaton over the last bytes of b: linear in the form's length, so text
// full of cut markers costs little.
func (m *matcher) prefixBefore(b string) int {
	best := 0
	for i, f := range m.forms {
		pi := m.fail[i]
		q := 0
		for _, c := range []byte(b[max(0, len(b)-len(f)):]) {
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

// load64 reads the eight bytes of s at i as a little-endian number (the
// compiler makes it one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
