package httpguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

const (
	validTP  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	validTP2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

func TestParseTraceparent(t *testing.T) {
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
		{"non-hex flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", false},
		{"uppercase flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A", false},
		{"short", validTP[:54], false},
		{"wrong delimiter", "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"newline", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n", false},
		{"empty", "", false},
		{"huge", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-" + strings.Repeat("a", 600), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := ParseTraceparent(tt.in)
			if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrInvalidTraceparent) {
				t.Fatalf("ParseTraceparent(%q) = %+v, %v; want ok=%v", tt.in, tp, err, tt.ok)
			}
			if tt.ok && tp.TraceID != tt.in[3:35] {
				t.Fatalf("trace id %q", tp.TraceID)
			}
		})
	}
}

func TestValidTracestate(t *testing.T) {
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
		{"two with OWS", "rojo=00f067aa0ba902b7 ,\tcongo=t61rcWkgMzE", true},
		{"empty members", ",,rojo=1,,", true},
		{"multi-tenant key", "fw529a3039@dt=abc", true},
		{"tenant starts with digit", "1tenant@sys=v", true},
		{"key chars", "a_-*/9=v", true},
		{"value with inner space", "k=a b", true},
		{"value trailing space trimmed as OWS", "k=ab ", true},
		{"32 members", many(32), true},
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
		{"carriage return", "k=v\r", false},
		{"non-ASCII", "k=vé", false},
		{"too long", "k=" + strings.Repeat("v", 256) + ",l=" + strings.Repeat("v", 256), false},
		{"value too long", "k=" + strings.Repeat("v", 257), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidTracestate(tt.in)
			if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrInvalidTracestate) {
				t.Fatalf("ValidTracestate(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
		})
	}
}

func TestTraceSanitize(t *testing.T) {
	tests := []struct {
		name         string
		parents      []string
		states       []string
		wantParent   string
		wantState    string
		wantCheckErr error
	}{
		{"none", nil, nil, "", "", nil},
		{"valid pair", []string{validTP}, []string{"k=v"}, validTP, "k=v", nil},
		{"valid parent alone", []string{validTP}, nil, validTP, "", nil},
		{"states joined", []string{validTP}, []string{"a=1", "b=2"}, validTP, "a=1,b=2", nil},
		{"bad state dropped, parent kept", []string{validTP}, []string{"BAD"}, validTP, "", ErrInvalidTracestate},
		{"bad parent drops both", []string{"00-bad"}, []string{"k=v"}, "", "", ErrInvalidTraceparent},
		{"repeated parent drops both", []string{validTP, validTP2}, []string{"k=v"}, "", "", ErrInvalidTraceparent},
		{"state without parent dropped", nil, []string{"k=v"}, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.parents {
				h.Add("Traceparent", v)
			}
			for _, v := range tt.states {
				h.Add("Tracestate", v)
			}
			r := &http.Request{Header: h}
			if err := (TraceHeaders{}).Check(r); tt.wantCheckErr == nil && err != nil || tt.wantCheckErr != nil && !errors.Is(err, tt.wantCheckErr) {
				t.Fatalf("Check = %v, want %v", err, tt.wantCheckErr)
			}
			tc, ok := TraceHeaders{}.Sanitize(h)
			if tc.Traceparent != tt.wantParent || tc.Tracestate != tt.wantState || ok != (tt.wantParent != "") {
				t.Fatalf("Sanitize = %+v %v", tc, ok)
			}
			if got := strings.Join(h.Values("Traceparent"), "|"); got != tt.wantParent {
				t.Fatalf("forwarded traceparent %q", got)
			}
			if got := strings.Join(h.Values("Tracestate"), "|"); got != tt.wantState {
				t.Fatalf("forwarded tracestate %q", got)
			}
		})
	}
}

func TestTraceHandler(t *testing.T) {
	var seen http.Header
	var fromCtx TraceContext
	var ok bool
	srv := serve(t, TraceHeaders{}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		fromCtx, ok = TraceFromContext(r.Context())
		w.Write([]byte("ok"))
	})))
	tests := []struct {
		name              string
		headers           map[string]string
		wantTP, wantState string
	}{
		{"valid", map[string]string{"Traceparent": validTP, "Tracestate": "k=v"}, validTP, "k=v"},
		{"invalid parent", map[string]string{"Traceparent": strings.ToUpper(validTP), "Tracestate": "k=v"}, "", ""},
		{"invalid state", map[string]string{"Traceparent": validTP, "Tracestate": "k=v," + strings.Repeat("x", 600)}, validTP, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantOK(t, send(t, srv, wireReq{headers: tt.headers}))
			if seen.Get("Traceparent") != tt.wantTP || seen.Get("Tracestate") != tt.wantState {
				t.Fatalf("next saw traceparent %q tracestate %q", seen.Get("Traceparent"), seen.Get("Tracestate"))
			}
			if ok != (tt.wantTP != "") || fromCtx.Traceparent != tt.wantTP || fromCtx.Tracestate != tt.wantState {
				t.Fatalf("TraceFromContext = %+v %v", fromCtx, ok)
			}
			out := http.Header{}
			fromCtx.Inject(out)
			if out.Get("Traceparent") != tt.wantTP || out.Get("Tracestate") != tt.wantState {
				t.Fatalf("Inject wrote %v", out)
			}
		})
	}
	if _, ok := TraceFromContext(httptest.NewRequest("GET", "/", nil).Context()); ok {
		t.Fatal("TraceFromContext without the stage reported ok")
	}
}

func FuzzTraceparent(f *testing.F) {
	for _, s := range []string{validTP, validTP2, "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "ff-" + validTP[3:], ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := ParseTraceparent(s)
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
		if ValidTracestate(s) != nil {
			return
		}
		if len(s) > MaxTracestateLen || strings.ContainsAny(s, "\r\n\x00") {
			t.Fatalf("accepted invalid tracestate %q", s)
		}
		for i := 0; i < len(s); i++ {
			if s[i] != '\t' && (s[i] < 0x20 || s[i] > 0x7e) {
				t.Fatalf("accepted byte %#x in %q", s[i], s)
			}
		}
	})
}
