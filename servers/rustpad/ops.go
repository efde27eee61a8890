package rustpad

import (
	"strings"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// The operations the write tools send, built from the state observed after
// the connect barrier. Every length is in code points. session.Edit
// transforms them over whatever other users did since, so concurrent edits
// are kept.

// setOp turns old into text, touching only the part that differs: the
// common prefix and suffix are retained, so a concurrent edit there keeps
// its place. On completely different texts it is [-len(old), text].
func setOp(old, text string) *ot.Operation {
	a, b := []rune(old), []rune(text)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	return ot.New().Retain(p).Delete(len(a) - p - q).Insert(string(b[p : len(b)-q])).Retain(q)
}

// appendOp adds text at the end of a text of n code points.
func appendOp(n int, text string) *ot.Operation {
	return ot.New().Retain(n).Insert(text)
}

// replaceOp replaces the non-overlapping occurrences of search in text,
// left to right (all of them, or only the first when all is false), and
// returns the operation and how many occurrences text holds in total.
// search must not be empty.
func replaceOp(text, search, replace string, all bool) (*ot.Operation, int) {
	op := ot.New()
	searchLen := utf8.RuneCountInString(search)
	count, done, pos := 0, 0, 0
	for {
		i := strings.Index(text[pos:], search)
		if i < 0 {
			break
		}
		count++
		if all || count == 1 {
			op.Retain(utf8.RuneCountInString(text[done : pos+i])).Delete(searchLen).Insert(replace)
			done = pos + i + len(search)
		}
		pos += i + len(search)
	}
	op.Retain(utf8.RuneCountInString(text[done:]))
	return op, count
}
