package httpguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	validTP  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	validTP2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

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
		{"bad state dropped, parent kept", []string{validTP}, []string{"BAD"}, validTP, "", errInvalidTracestate},
		{"bad parent drops both", []string{"00-bad"}, []string{"k=v"}, "", "", errInvalidTraceparent},
		{"repeated parent drops both", []string{validTP, validTP2}, []string{"k=v"}, "", "", errInvalidTraceparent},
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
			if err := (traceHeaders{}).Check(r); tt.wantCheckErr == nil && err != nil || tt.wantCheckErr != nil && !errors.Is(err, tt.wantCheckErr) {
				t.Fatalf("Check = %v, want %v", err, tt.wantCheckErr)
			}
			tc, ok := traceHeaders{}.Sanitize(h)
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
	srv := serve(t, traceHeaders{}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
			fromCtx.inject(out)
			if out.Get("Traceparent") != tt.wantTP || out.Get("Tracestate") != tt.wantState {
				t.Fatalf("Inject wrote %v", out)
			}
		})
	}
	if _, ok := TraceFromContext(httptest.NewRequest("GET", "/", nil).Context()); ok {
		t.Fatal("TraceFromContext without the stage reported ok")
	}
}
