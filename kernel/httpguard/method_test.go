package httpguard

import (
	"net/http/httptest"
	"testing"
)

func TestPostOnly(t *testing.T) {
	srv := serve(t, postOnly{}.Handler(okHandler))
	for _, tt := range []struct {
		method string
		allow  bool
	}{
		{"POST", true}, {"GET", false}, {"DELETE", false}, {"PUT", false}, {"PATCH", false}, {"OPTIONS", false}, {"HEAD", false},
	} {
		t.Run(tt.method, func(t *testing.T) {
			err := postOnly{}.Check(httptest.NewRequest(tt.method, "/", nil))
			if (err == nil) != tt.allow {
				t.Fatalf("Check = %v", err)
			}
			got := send(t, srv, wireReq{method: tt.method, body: ""})
			if tt.allow {
				wantOK(t, got)
				return
			}
			if got.status != 405 || got.header.Get("Allow") != "POST" {
				t.Fatalf("status %d Allow %q", got.status, got.header.Get("Allow"))
			}
			if tt.method != "HEAD" { // HEAD answers carry no body
				wantRefusal(t, got, 405, codeInvalidRequest, reasonMethodNotAllowed)
			}
		})
	}
}
