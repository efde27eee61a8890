package egress

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Report says what the gate changed in one message. It never holds any of
// the message.
type Report struct {
	// Redacted counts secrets replaced by Redacted.
	Redacted int
	// Cleaned counts strings (keys included) that cleaning changed:
	// invisible characters removed, bidirectional controls made visible,
	// envelope tags neutralized.
	Cleaned int
}

// Changed reports whether the gate changed anything.
func (r Report) Changed() bool { return r.Redacted > 0 || r.Cleaned > 0 }

// ErrMessage is Message's error for bytes that are not one JSON value: the
// caller must not send them.
var ErrMessage = errors.New("egress: the message is not one JSON value")

// Message returns msg — one JSON-RPC message, as it is about to be written
// to a client — with every string value and object key scrubbed of the
// secrets of sec and cleaned (see the package comment). What is left alone:
// the message's "jsonrpc", "id" and "method", and the progress token and
// request id a client chose ("params.progressToken",
// "params._meta.progressToken", "params.requestId"), which the client
// matches byte for byte. When nothing changes, msg itself is returned. An
// error (ErrMessage) means msg is not one JSON value; nothing of it may be
// sent.
func Message(msg []byte, sec *Secrets) ([]byte, Report, error) {
	w := walker{s: jsonscan.Scanner{Data: msg}, sec: sec, text: readOnly(msg)}
	var path [16]string
	w.path = path[:0]
	defer w.done()
	w.s.SkipSpace()
	if err := w.value(0); err != nil || !w.s.AtEnd() {
		return nil, Report{}, fmt.Errorf("%w: %v", ErrMessage, err)
	}
	if w.out == nil {
		return msg, w.rep, nil
	}
	return append(w.out, msg[w.last:]...), w.rep, nil
}

// ScrubJSON returns doc — any JSON value, an upstream's answer say — with
// every secret of sec removed from its string values, keys and numbers, as
// Message removes them, and how many it removed; nothing is cleaned and no
// member is exempt. A server runs it on an answer before it keeps it (a
// cache holds only what the gate would let through). doc itself is
// returned when nothing changes; an error (ErrMessage) means doc is not
// one JSON value.
func ScrubJSON(doc []byte, sec *Secrets) ([]byte, int, error) {
	if sec.Len() == 0 {
		return doc, 0, nil
	}
	w := walker{s: jsonscan.Scanner{Data: doc}, sec: sec, text: readOnly(doc), scrubOnly: true}
	defer w.done()
	w.s.SkipSpace()
	if err := w.value(0); err != nil || !w.s.AtEnd() {
		return nil, 0, fmt.Errorf("%w: %v", ErrMessage, err)
	}
	if w.out == nil {
		return doc, 0, nil
	}
	return append(w.out, doc[w.last:]...), w.rep.Redacted, nil
}

// scratchPool holds the walkers' decoding buffers. A buffer that grew
// past maxScratch (a huge string) is not kept.
var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

const maxScratch = 1 << 20

// done gives the walker's scratch buffer back; no string read from it is
// kept.
func (w *walker) done() {
	if w.scratch != nil && cap(*w.scratch) <= maxScratch {
		scratchPool.Put(w.scratch)
	}
	w.scratch = nil
}

// readOnly is b read as a string, without a copy: the walker's view of a
// message its caller does not change while the walker runs. No string
// made from it outlives Message or ScrubJSON — what they return is b
// itself or a new slice — so the message is not copied (14 KB of a
// list_zones answer, docs/performance.md).
func readOnly(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// walker rewrites a message's strings in one pass over it. out is nil
// until the first change; then msg[:last] has been written to out.
type walker struct {
	s    jsonscan.Scanner
	sec  *Secrets
	text string // msg, read as a string (readOnly): strings without escapes are its substrings
	// scratch holds the decoded form of the string value being gated
	// (str): reused, so decoding a message allocates nothing unless the
	// gate changes a string
	scratch *[]byte // from scratchPool, given back by done
	out     []byte
	last    int
	path    []string // the keys down to the value being read; "" for an array element
	rep     Report
	// scrubOnly removes secrets everywhere and cleans nothing (ScrubJSON)
	scrubOnly bool
}

// kind is how the gate treats a string, by where it is in the message.
type kind int

const (
	cleaned   kind = iota // scrubbed and cleaned
	enveloped             // scrubbed and cleaned, the envelope's own tags kept
	exempt                // left alone
)

// kindAt classifies the value at the walker's path.
func (w *walker) kindAt() kind {
	if w.scrubOnly {
		return cleaned
	}
	p := w.path
	switch len(p) {
	case 1:
		if p[0] == "jsonrpc" || p[0] == "id" || p[0] == "method" {
			return exempt
		}
	case 2:
		if p[0] == "params" && (p[1] == "progressToken" || p[1] == "requestId") {
			return exempt
		}
	case 3:
		if p[0] == "params" && p[1] == "_meta" && p[2] == "progressToken" {
			return exempt
		}
	case 4:
		if p[0] == "result" && (p[1] == "content" || p[1] == "contents") && p[2] == "" && p[3] == "text" {
			return enveloped
		}
	case 5: // a prompt's message (prompts/get), which a relaying server envelopes (kernel.Server.ShapePrompt)
		if p[0] == "result" && p[1] == "messages" && p[2] == "" && p[3] == "content" && p[4] == "text" {
			return enveloped
		}
	}
	return cleaned
}

func (w *walker) value(depth int) error {
	switch w.s.Peek() {
	case '{':
		return w.object(depth + 1)
	case '[':
		return w.array(depth + 1)
	case '"':
		// scanned and, when it holds escapes, decoded in one pass into
		// the walker's scratch buffer
		start := w.s.Pos
		if w.scratch == nil {
			w.scratch = scratchPool.Get().(*[]byte)
		}
		raw, dec, esc, err := w.s.StringDecoded((*w.scratch)[:0])
		if err != nil {
			return err
		}
		*w.scratch = dec
		if k := w.kindAt(); k != exempt {
			return w.str(start, raw, esc, k)
		}
		return nil
	}
	start := w.s.Pos
	if err := w.s.Scalar(); err != nil {
		return err
	}
	// a numeric secret echoed as a number: the number becomes the string
	// "[redacted]"
	if num := w.text[start:w.s.Pos]; len(num) >= w.sec.shortest() && w.kindAt() != exempt && w.sec.Contains(num) {
		w.rep.Redacted++
		w.replace(start, w.s.Pos, Redacted)
	}
	return nil
}

func (w *walker) array(depth int) error {
	w.path = append(w.path, "")
	err := w.s.Elements(depth, func() error { return w.value(depth) })
	w.path = w.path[:len(w.path)-1]
	return err
}

// object walks an object's members; a key that cleaning makes equal to
// another of the object's keys gets a numbered suffix, as the envelope
// renames keys, so that no reader sees a member twice.
func (w *walker) object(depth int) error {
	if depth > jsonscan.DefaultMaxDepth {
		return jsonscan.ErrDepth
	}
	s := &w.s
	open := s.Pos
	s.Pos++ // '{'
	if s.Peek() == '}' {
		s.Pos++
		return nil
	}
	var keys []string // the object's keys as written, once one changed
	changed := false
	for {
		if s.Peek() != '"' {
			return jsonscan.ErrSyntax
		}
		start := s.Pos
		raw, esc, err := s.String()
		if err != nil {
			return err
		}
		var key, out string
		if !esc && len(raw) < w.sec.shortest() && quietASCII(raw) {
			// nothing to clean, too short for a secret (most keys): read
			// in place, not copied
			key = w.text[start+1 : s.Pos-1]
			out = key
		} else {
			if key, err = jsonscan.DecodeString(raw, esc); err != nil {
				return err
			}
			out = w.gate(key, cleaned)
		}
		if out != key && !changed {
			changed, keys = true, w.keysBefore(open, start, depth)
		}
		if changed {
			out = uniqueKey(keys, out)
			keys = append(keys, out)
			if out != key {
				w.replace(start, s.Pos, out)
			}
		}
		if s.Peek() != ':' {
			return jsonscan.ErrSyntax
		}
		s.Pos++
		s.SkipSpace()
		w.path = append(w.path, key)
		err = w.value(depth)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
		switch s.Peek() {
		case ',':
			s.Pos++
		case '}':
			s.Pos++
			return nil
		default:
			return jsonscan.ErrSyntax
		}
	}
}

// keysBefore returns the keys of the object opened at open whose members
// end before end: the keys before the first one the gate changed, so as
// they are written.
func (w *walker) keysBefore(open, end, depth int) []string {
	r := jsonscan.Scanner{Data: w.s.Data[:end]}
	r.Pos = open + 1
	var keys []string
	for r.Peek() == '"' {
		raw, esc, _ := r.String()
		key, _ := jsonscan.DecodeString(raw, esc)
		keys = append(keys, key)
		r.SkipSpace()
		r.Pos++ // ':'
		if r.Skip(depth) != nil {
			break
		}
		if r.Peek() == ',' {
			r.Pos++
		}
	}
	return keys
}

// uniqueKey returns key, or key with the first " (N)" suffix that no key of
// keys has.
func uniqueKey(keys []string, key string) string {
	taken := func(k string) bool { return slices.Contains(keys, k) }
	if !taken(key) {
		return key
	}
	for n := 2; ; n++ {
		if k := key + " (" + strconv.Itoa(n) + ")"; !taken(k) {
			return k
		}
	}
}

// str gates one string value read from raw (its content, esc: whether it
// has escapes, decoded then in the walker's scratch) at start.
func (w *walker) str(start int, raw []byte, esc bool, k kind) error {
	var s string
	if esc {
		// decoded in scratch (value) and read in place: gate returns s
		// itself or a new string, and only a new one is kept (replace
		// copies it)
		s = readOnly(*w.scratch)
	} else {
		if len(raw) < w.sec.shortest() && quietASCII(raw) { // nothing to clean, too short for a secret
			return nil
		}
		s = w.text[start+1 : w.s.Pos-1]
	}
	if out := w.gate(s, k); out != s {
		w.replace(start, w.s.Pos, out)
	}
	return nil
}

// quietASCII reports whether raw is printable ASCII without '<': cleaning
// leaves it as it is.
func quietASCII(raw []byte) bool {
	for _, c := range raw {
		if c < 0x20 || c >= 0x7f || c == '<' {
			return false
		}
	}
	return true
}

// gate scrubs and cleans one string, counting what it changed.
func (w *walker) gate(s string, k kind) string {
	out, n := w.sec.Scrub(s)
	w.rep.Redacted += n
	if w.scrubOnly {
		return out
	}
	var changed bool
	if k == enveloped {
		out, changed = untrusted.CleanEnveloped(out)
	} else {
		out, changed = untrusted.Clean(out)
	}
	if changed {
		w.rep.Cleaned++
		// cleaning writes markers ("[U+202E]", "[") that could spell a
		// secret anew
		var n2 int
		out, n2 = w.sec.Scrub(out)
		w.rep.Redacted += n2
	}
	return out
}

// replace writes s, encoded, in place of the message's bytes [from, to).
func (w *walker) replace(from, to int, s string) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.s.Data)+64)
	}
	w.out = append(w.out, w.s.Data[w.last:from]...)
	w.out = jsonscan.AppendHTMLString(w.out, s)
	w.last = to
}
