// Package w3ctrace is the kernel's one W3C Trace Context (level 1) grammar:
// which traceparent and tracestate values are valid. The HTTP guards
// (httpguard) decide with it what they keep from a request, and the
// upstream client (upstream) what it forwards, so both always agree. It
// imports neither; it owns its errors, and callers map them to their own.
package w3ctrace

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by Parse and ValidState. Use errors.Is.
var (
	errTraceparent = errors.New("w3ctrace: invalid traceparent")
	errTracestate  = errors.New("w3ctrace: invalid tracestate")
)

// maxStateLen caps a tracestate: W3C asks vendors to propagate at least 512
// characters; longer is invalid here, so it is dropped rather than cut.
const maxStateLen = 512

const (
	maxStateMembers = 32
	maxParentLen    = 512
)

// Traceparent is a parsed traceparent header. The fields are lowercase hex.
type Traceparent struct {
	Version, TraceID, ParentID, Flags string
}

// Parse validates a traceparent header: version, trace-id, parent-id and
// flags in lowercase hex; version not "ff"; ids not all zero; exactly 55
// characters for version 00, and for later versions anything after the
// first 55 characters introduced by '-' and made of visible ASCII, at most
// 512 characters in all. Errors wrap errTraceparent.
func Parse(s string) (Traceparent, error) {
	bad := func(what string) (Traceparent, error) {
		return Traceparent{}, fmt.Errorf("%s: %w", what, errTraceparent)
	}
	if len(s) < 55 || len(s) > maxParentLen {
		return bad("length")
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return bad("delimiters")
	}
	tp := Traceparent{Version: s[0:2], TraceID: s[3:35], ParentID: s[36:52], Flags: s[53:55]}
	switch {
	case !lowerHex(tp.Version) || tp.Version == "ff":
		return bad("version")
	case !lowerHex(tp.TraceID) || allZero(tp.TraceID):
		return bad("trace-id")
	case !lowerHex(tp.ParentID) || allZero(tp.ParentID):
		return bad("parent-id")
	case !lowerHex(tp.Flags):
		return bad("flags")
	case tp.Version == "00" && len(s) != 55:
		return bad("version 00 length")
	case len(s) > 55 && (s[55] != '-' || !visibleASCII(s[56:])):
		return bad("future-version suffix")
	}
	return tp, nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// ValidState validates a tracestate header (the members of several headers
// joined by commas): at most maxStateLen characters and 32 list members,
// each key=value per W3C Trace Context level 1 (so no newline or other
// control character anywhere), keys unique; empty members and optional
// whitespace around members are allowed, and "" is valid (no state).
// Errors wrap errTracestate.
func ValidState(s string) error {
	if len(s) > maxStateLen {
		return fmt.Errorf("over %d characters: %w", maxStateLen, errTracestate)
	}
	var keys [maxStateMembers]string
	n := 0
	for rest := s; ; {
		member, tail, more := strings.Cut(rest, ",")
		member = strings.Trim(member, " \t")
		if member != "" {
			if n == maxStateMembers {
				return fmt.Errorf("over %d members: %w", maxStateMembers, errTracestate)
			}
			key, err := stateMember(member)
			if err != nil {
				return err
			}
			for _, k := range keys[:n] {
				if k == key {
					return fmt.Errorf("duplicate key: %w", errTracestate)
				}
			}
			keys[n] = key
			n++
		}
		if !more {
			return nil
		}
		rest = tail
	}
}

func stateMember(m string) (key string, err error) {
	key, value, ok := strings.Cut(m, "=")
	if !ok || !validKey(key) || !validValue(value) {
		return "", fmt.Errorf("malformed list member: %w", errTracestate)
	}
	return key, nil
}

func keyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '*' || c == '/'
}

// validKey: simple-key, or tenant-id@system-id for multi-tenant vendors.
func validKey(k string) bool {
	tenant, system, multi := strings.Cut(k, "@")
	if !multi {
		return len(k) >= 1 && len(k) <= 256 && 'a' <= k[0] && k[0] <= 'z' && allKeyChars(k[1:])
	}
	return len(tenant) >= 1 && len(tenant) <= 241 && (tenant[0] >= 'a' && tenant[0] <= 'z' || tenant[0] >= '0' && tenant[0] <= '9') &&
		allKeyChars(tenant[1:]) &&
		len(system) >= 1 && len(system) <= 14 && 'a' <= system[0] && system[0] <= 'z' && allKeyChars(system[1:])
}

func allKeyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !keyChar(s[i]) {
			return false
		}
	}
	return true
}

// validValue: 1-256 printable characters except ',' and '=', spaces
// allowed inside but not at the end.
func validValue(v string) bool {
	if len(v) < 1 || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}
