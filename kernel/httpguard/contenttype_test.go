package httpguard

import (
	"errors"
	"net/http/httptest"
	"testing"
)

const acceptBoth = "application/json, text/event-stream"

func TestContentTypeCheck(t *testing.T) {
	tests := []struct {
		name     string
		ctype    []string
		encoding []string
		accept   []string
		noAccept bool // DisableAcceptCheck
		want     error
	}{
		{"plain", []string{"application/json"}, nil, []string{acceptBoth}, false, nil},
		{"charset", []string{"application/json; charset=utf-8"}, nil, []string{acceptBoth}, false, nil},
		{"charset upper", []string{"Application/JSON; charset=UTF-8"}, nil, []string{acceptBoth}, false, nil},
		{"other charset", []string{"application/json; charset=utf-16"}, nil, []string{acceptBoth}, false, errUnsupportedMediaType},
		{"missing", nil, nil, []string{acceptBoth}, false, errUnsupportedMediaType},
		{"repeated", []string{"application/json", "application/json"}, nil, []string{acceptBoth}, false, errUnsupportedMediaType},
		{"text/plain", []string{"text/plain"}, nil, []string{acceptBoth}, false, errUnsupportedMediaType},
		{"json suffix type", []string{"application/problem+json"}, nil, []string{acceptBoth}, false, errUnsupportedMediaType},
		{"form", []string{"application/x-www-form-urlencoded"}, nil, []string{acceptBoth}, false, errUnsupportedMediaType},
		{"malformed", []string{"application/json;;"}, nil, []string{acceptBoth}, false, errUnsupportedMediaType},
		{"identity", []string{"application/json"}, []string{"identity"}, []string{acceptBoth}, false, nil},
		{"identity list", []string{"application/json"}, []string{"Identity, identity"}, []string{acceptBoth}, false, nil},
		{"gzip", []string{"application/json"}, []string{"gzip"}, []string{acceptBoth}, false, errUnsupportedEncoding},
		{"identity then br", []string{"application/json"}, []string{"identity", "br"}, []string{acceptBoth}, false, errUnsupportedEncoding},
		{"accept missing", []string{"application/json"}, nil, nil, false, errNotAcceptable},
		{"accept json only", []string{"application/json"}, nil, []string{"application/json"}, false, errNotAcceptable},
		{"accept two headers", []string{"application/json"}, nil, []string{"application/json", "text/event-stream;q=0.5"}, false, nil},
		{"accept wildcard", []string{"application/json"}, nil, []string{"*/*"}, false, nil},
		{"accept type wildcards", []string{"application/json"}, nil, []string{"application/*, text/*"}, false, nil},
		{"accept check disabled", []string{"application/json"}, nil, nil, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			for _, v := range tt.ctype {
				r.Header.Add("Content-Type", v)
			}
			for _, v := range tt.encoding {
				r.Header.Add("Content-Encoding", v)
			}
			for _, v := range tt.accept {
				r.Header.Add("Accept", v)
			}
			err := ContentType{DisableAcceptCheck: tt.noAccept}.Check(r)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestContentTypeHandler(t *testing.T) {
	srv := serve(t, ContentType{}.Handler(okHandler))
	tests := []struct {
		name    string
		headers map[string]string
		status  int
		reason  string
	}{
		{"ok", map[string]string{"Content-Type": "application/json", "Accept": acceptBoth}, 200, ""},
		{"text/plain", map[string]string{"Content-Type": "text/plain", "Accept": acceptBoth}, 415, reasonUnsupportedMediaType},
		{"gzip", map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip", "Accept": acceptBoth}, 415, reasonUnsupportedEncoding},
		{"accept", map[string]string{"Content-Type": "application/json", "Accept": "text/html"}, 406, reasonNotAcceptable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := send(t, srv, wireReq{headers: tt.headers, body: "{}"})
			if tt.status == 200 {
				wantOK(t, got)
				return
			}
			wantRefusal(t, got, tt.status, codeInvalidRequest, tt.reason)
		})
	}
}
