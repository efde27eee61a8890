package w3ctrace

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

const (
	validTP  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	validTP2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"valid", validTP, true},
		{"valid unsampled", validTP2, true},
		{"future version, longer", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", true},
		{"future version, exact", "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		{"future version, no dash after flags", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false},
		{"future version, space in suffix", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-a b", false},
		{"version 00 too long", validTP + "-x", false},
		{"version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"uppercase version", "0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"uppercase trace id", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"zero parent id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"non-hex trace id", "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", false},
		{"non-hex flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", false},
		{"uppercase flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A", false},
		{"short", validTP[:54], false},
		{"wrong delimiter", "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"newline", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n", false},
		{"newline in flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0\n", false},
		{"empty", "", false},
		{"huge", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-" + strings.Repeat("a", 600), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := Parse(tt.in)
			if (err == nil) != tt.ok || err != nil && !errors.Is(err, errTraceparent) {
				t.Fatalf("Parse(%q) = %+v, %v; want ok=%v", tt.in, tp, err, tt.ok)
			}
			if tt.ok && tp.TraceID != tt.in[3:35] {
				t.Fatalf("trace id %q", tp.TraceID)
			}
		})
	}
}

func TestValidState(t *testing.T) {
	many := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "k" + strconv.Itoa(i) + "=v"
		}
		return strings.Join(parts, ",")
	}
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"empty", "", true},
		{"one", "congo=t61rcWkgMzE", true},
		{"two", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", true},
		{"two with OWS", "rojo=00f067aa0ba902b7 ,\tcongo=t61rcWkgMzE", true},
		{"empty members", ",,rojo=1,,", true},
		{"multi-tenant key", "fw529a3039@dt=abc", true},
		{"tenant starts with digit", "1tenant@sys=v", true},
		{"key chars", "a_-*/9=v", true},
		{"value with inner space", "k=a b", true},
		{"value trailing space trimmed as OWS", "k=ab ", true},
		{"32 members", many(32), true},
		{"512 characters", "k=" + strings.Repeat("v", 250) + ",l=" + strings.Repeat("v", 255), true},
		{"33 members", many(33), false},
		{"duplicate key", "k=1,k=2", false},
		{"uppercase key", "Key=v", false},
		{"key starts with digit", "1key=v", false},
		{"system id too long", "t@abcdefghijklmno=v", false},
		{"system id starts with digit", "t@1sys=v", false},
		{"empty value", "k=", false},
		{"no equals", "k", false},
		{"equals in value", "k=a=b", false},
		{"newline", "k=v\nx=y", false},
		{"header injection", "a=b\nInjected: x", false},
		{"carriage return", "k=v\r", false},
		{"NUL", "a=\x00", false},
		{"non-ASCII", "k=vé", false},
		{"too long", "k=" + strings.Repeat("v", 256) + ",l=" + strings.Repeat("v", 256), false},
		{"value too long", "k=" + strings.Repeat("v", 257), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidState(tt.in)
			if (err == nil) != tt.ok || err != nil && !errors.Is(err, errTracestate) {
				t.Fatalf("ValidState(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
		})
	}
}

// TestDisagreements lists the values the two former grammars (httpguard's
// and upstream's) judged differently, with the one answer now given to
// both the guard and the upstream client. upstream accepted any printable
// ASCII tracestate up to 512 characters, and only version-00 traceparents.
func TestDisagreements(t *testing.T) {
	tests := []struct {
		name        string
		parent      bool // a traceparent, else a tracestate
		in          string
		guardWas    bool
		upstreamWas bool
		want        bool
	}{
		{"state without list-member form", false, "BAD", false, true, false},
		{"state of 512 a's", false, strings.Repeat("a", 512), false, true, false},
		{"state with uppercase key", false, "Key=v", false, true, false},
		{"state with duplicate keys", false, "k=1,k=2", false, true, false},
		{"state with 33 distinct members", false, func() string {
			var b strings.Builder
			for i := range 33 {
				b.WriteString("k" + strconv.Itoa(i) + "=v,")
			}
			return b.String()
		}(), false, true, false},
		{"state with an empty value", false, "k=", false, true, false},
		{"state with '=' in the value", false, "k=a=b", false, true, false},
		{"future-version parent", true, "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, false, true},
		{"future-version parent with suffix", true, "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.parent {
				_, err = Parse(tt.in)
			} else {
				err = ValidState(tt.in)
			}
			if got := err == nil; got != tt.want {
				t.Fatalf("valid = %v (%v), want %v (guard said %v, upstream said %v)", got, err, tt.want, tt.guardWas, tt.upstreamWas)
			}
		})
	}
}

func FuzzTraceparent(f *testing.F) {
	for _, s := range []string{validTP, validTP2, "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "ff-" + validTP[3:], ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := Parse(s)
		if err != nil {
			return
		}
		if len(s) < 55 || len(s) > 512 || tp.Version == "ff" || !lowerHex(tp.TraceID+tp.ParentID+tp.Flags+tp.Version) ||
			strings.ContainsAny(s, "\r\n\x00 ") || tp.Version == "00" && len(s) != 55 {
			t.Fatalf("accepted invalid traceparent %q", s)
		}
	})
}

func FuzzTracestate(f *testing.F) {
	for _, s := range []string{"", "k=v", "a=1, b=2", "t@s=v", ",,", "k=v\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidState(s) != nil {
			return
		}
		if len(s) > maxStateLen || strings.ContainsAny(s, "\r\n\x00") {
			t.Fatalf("accepted invalid tracestate %q", s)
		}
		for i := 0; i < len(s); i++ {
			if s[i] != '\t' && (s[i] < 0x20 || s[i] > 0x7e) {
				t.Fatalf("accepted byte %#x in %q", s[i], s)
			}
		}
		for _, m := range strings.Split(s, ",") {
			if m = strings.Trim(m, " \t"); m != "" && !strings.Contains(m, "=") {
				t.Fatalf("accepted a member without '=' in %q", s)
			}
		}
	})
}
