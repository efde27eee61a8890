package jsonscan

import "math/bits"

// plainRun is the length of the longest prefix of s that AppendString
// copies as it is (plainASCII, or plainHTMLASCII when html): eight bytes at
// a time (the first byte to escape found in its word by its flag), the
// last few bytes one by one. AppendString skips each run of plain bytes with it, where its byte
// loop cost some ten instructions a byte: a result's text and a call's
// arguments are mostly such runs. FuzzAppendString and
// FuzzAppendHTMLString hold the encoding to encoding/json's; TestPlainRun
// holds plainRun to the tables.
func plainRun(s string, html bool) int {
	const (
		ones = 0x0101010101010101
		lo   = 0x20 * ones
		hi   = 0x80 * ones
	)
	i := 0
	for ; len(s)-i >= 8; i += 8 {
		t := s[i : i+8] // one load, no bounds checks
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		// a byte below 0x20 borrows and one at or above 0x80 has its high
		// bit; a byte equal to c is a zero byte of w^c, which borrows:
		// each sets the high bit of some byte (- and | bind alike, hence
		// the parentheses)
		bad := (w - lo) | w
		bs := w ^ ('\\' * ones)
		bad |= (bs - ones) &^ bs
		if html {
			// '"' and '&' differ in bit 0x04 only, '<' and '>' in 0x02
			qa, lg := (w|0x04*ones)^('&'*ones), (w|0x02*ones)^('>'*ones)
			bad |= ((qa - ones) &^ qa) | ((lg - ones) &^ lg)
		} else {
			q := w ^ ('"' * ones)
			bad |= (q - ones) &^ q
		}
		if bad &= hi; bad != 0 {
			// a borrow only carries upwards, from a byte flagged
			// rightly: the lowest flag is the first byte to escape
			return i + bits.TrailingZeros64(bad)/8
		}
	}
	plain := &plainASCII
	if html {
		plain = &plainHTMLASCII
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || !plain[c] {
			break
		}
	}
	return i
}
