package untrusted

import "unicode/utf8"

// CutIndex is where to cut s so that at most n bytes are kept and no
// character is split: len(s) when s is no longer than n, else the last
// character boundary at or before n (0 for a negative n). Every place that
// bounds text for a reader (a result, a consent form, an error, a log
// line, a status message) cuts with it and adds its own mark.
func CutIndex[T ~string | ~[]byte](s T, n int) int {
	if len(s) <= n {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
