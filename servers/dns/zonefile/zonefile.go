// Package zonefile reads RFC 1035 master files under a budget. It is the
// one place where the DNS providers turn zone-file text into records:
// localzone parses its files and imports with it, and the hetzner provider
// checks an import with it before a confirmation token is issued.
//
// A zone file is a program: one $GENERATE line of under 40 bytes makes
// 65,536 records. So every record is charged against the budget before it
// is filed anywhere (before de-duplication), and a $GENERATE range is
// charged by its size before it is expanded. The parse is tied to the
// caller's context, and Acquire bounds how many untrusted parses run at
// once, so that many concurrent imports keep the process under its memory
// limit.
package zonefile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	mdns "github.com/miekg/dns"
)

// Limits.
const (
	// MaxRecords is the budget of one zone file: records parsed, counted
	// before de-duplication, and records a $GENERATE range would make.
	MaxRecords = 200_000
	// MaxBytes is the largest zone file read at all.
	MaxBytes = 32 << 20
	// MaxParses is how many untrusted parses (tool input) run at once.
	MaxParses = 2
	// checkEvery is how many records are parsed between context checks.
	checkEvery = 256
)

// Error is a zone file refused: it does not parse, uses a directive that is
// not allowed, or is over the budget. Msg names the line where it can.
type Error struct {
	Msg    string
	budget bool
}

func (e *Error) Error() string { return e.Msg }

// Unwrap is ErrBudget for a file over the record budget.
func (e *Error) Unwrap() error {
	if e.budget {
		return ErrBudget
	}
	return nil
}

// ErrBudget is wrapped by the Error of a file over the record budget.
var ErrBudget = errors.New("over the record budget")

func overBudget(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), budget: true}
}

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// parsed counts every record any parse has read, for tests that assert a
// hostile file is refused before the parser runs.
var parsed atomic.Int64

// Parsed reports how many records all parses of this process have read.
func Parsed() int64 { return parsed.Load() }

// Precount charges the budget for what the text announces before it is
// parsed: it refuses $INCLUDE (a zone file must not read other files) and
// sums the sizes of the $GENERATE ranges, refusing the file when they
// exceed max. It reads directives at the start of a line, as the parser
// does; whatever it misses is still charged record by record by Records.
func Precount(text string, max int) error {
	generated, lineNo := 0, 0
	for line := range strings.Lines(text) {
		lineNo++
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "$") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "$INCLUDE":
			return errorf("$INCLUDE at line %d: a zone file may not include other files", lineNo)
		case "$GENERATE":
			if len(f) < 2 {
				return errorf("$GENERATE at line %d: no range", lineNo)
			}
			n, ok := rangeSize(f[1])
			if !ok {
				return errorf("$GENERATE at line %d: bad range", lineNo)
			}
			if generated += n; generated > max {
				return overBudget("zone file would have more than %d records ($GENERATE ranges up to line %d make %d)", max, lineNo, generated)
			}
		}
	}
	return nil
}

// rangeSize is the number of records a $GENERATE range start-stop[/step]
// makes, by the grammar miekg/dns applies.
func rangeSize(r string) (int, bool) {
	step := int64(1)
	if i := strings.IndexByte(r, '/'); i >= 0 {
		s, err := strconv.ParseInt(r[i+1:], 10, 64)
		if err != nil || s <= 0 {
			return 0, false
		}
		step, r = s, r[:i]
	}
	a, b, ok := strings.Cut(r, "-")
	if !ok {
		return 0, false
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start || (end-start)/step > 65535 {
		return 0, false
	}
	return int((end-start)/step) + 1, true
}

// Options say how Records reads.
type Options struct {
	// Max is the record budget; MaxRecords when zero.
	Max int
	// DefaultTTL is the TTL of records before any $TTL or explicit TTL.
	DefaultTTL uint32
}

// Records parses text with origin (absolute) and hands each record and its
// comment to fn, charging the budget before fn sees it. It refuses $INCLUDE,
// stops at the budget, and returns ctx's error when ctx ends. A parse error
// is an *Error; fn's errors are returned as they are.
func Records(ctx context.Context, text, origin string, o Options, fn func(rr mdns.RR, comment string) error) error {
	max := o.Max
	if max <= 0 {
		max = MaxRecords
	}
	if len(text) > MaxBytes {
		return errorf("zone file is larger than %d bytes", MaxBytes)
	}
	if err := Precount(text, max); err != nil {
		return err
	}
	zp := mdns.NewZoneParser(strings.NewReader(text), origin, "")
	zp.SetIncludeAllowed(false)
	zp.SetDefaultTTL(o.DefaultTTL)
	n := 0
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if n++; n > max {
			return overBudget("zone file has more than %d records", max)
		}
		parsed.Add(1)
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(rr, zp.Comment()); err != nil {
			return err
		}
	}
	if err := zp.Err(); err != nil {
		return errorf("%s", strings.TrimPrefix(err.Error(), "dns: "))
	}
	return ctx.Err()
}

// slots bounds the untrusted parses running at once.
var slots = make(chan struct{}, MaxParses)

// Acquire takes one of MaxParses parse slots, waiting until one is free or
// ctx ends. Call it around the parse of a zone file a caller sent (not while
// holding a lock other callers need), and call release when done.
func Acquire(ctx context.Context) (release func(), err error) {
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
