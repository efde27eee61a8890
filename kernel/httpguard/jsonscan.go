package httpguard

import "fmt"

// maxJSONDepth matches the go-sdk decoder's nesting cap.
const maxJSONDepth = 1000

// scanner walks JSON text (RFC 8259) without building values.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) atEnd() bool {
	s.ws()
	return s.i == len(s.b)
}

// members walks an object whose '{' is next, calling fn for each member with
// the decoded key and the scanner at the value; fn must consume the value.
func (s *scanner) members(depth int, fn func(key []byte) error) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("nesting over %d: %w", maxJSONDepth, ErrInvalidJSON)
	}
	if s.peek() != '{' {
		return ErrInvalidJSON
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return ErrInvalidJSON
		}
		raw, esc, err := s.str()
		if err != nil {
			return err
		}
		key := raw
		if esc {
			k, err := decodeStr(raw, true)
			if err != nil {
				return err
			}
			key = []byte(k)
		}
		if s.peek() != ':' {
			return ErrInvalidJSON
		}
		s.i++
		s.ws()
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return ErrInvalidJSON
		}
	}
}

// str consumes a string whose '"' is next and returns its raw content and
// whether it holds escapes. Control characters and bad escapes are refused.
func (s *scanner) str() (raw []byte, escaped bool, err error) {
	s.i++ // opening quote
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return nil, false, err
			}
		case c < 0x20:
			return nil, false, ErrInvalidJSON
		default:
			s.i++
		}
	}
	return nil, false, ErrInvalidJSON
}

func (s *scanner) escape() error {
	if s.i+1 >= len(s.b) {
		return ErrInvalidJSON
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return nil
	case 'u':
		if s.i+6 > len(s.b) {
			return ErrInvalidJSON
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if !isHex(h) {
				return ErrInvalidJSON
			}
		}
		s.i += 6
		return nil
	}
	return ErrInvalidJSON
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipValue consumes one value, validating it, at the given nesting depth.
func (s *scanner) skipValue(depth int) error {
	switch s.peek() {
	case '{':
		return s.members(depth+1, func([]byte) error { return s.skipValue(depth + 1) })
	case '[':
		return s.elements(depth + 1)
	case '"':
		_, _, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case 0:
		return ErrInvalidJSON
	}
	return s.number()
}

func (s *scanner) elements(depth int) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("nesting over %d: %w", maxJSONDepth, ErrInvalidJSON)
	}
	s.i++ // '['
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := s.skipValue(depth); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return ErrInvalidJSON
		}
	}
}

func (s *scanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return ErrInvalidJSON
	}
	s.i += len(lit)
	return nil
}

// number consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return ErrInvalidJSON
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return ErrInvalidJSON
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return ErrInvalidJSON
		}
	}
	return nil
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}
