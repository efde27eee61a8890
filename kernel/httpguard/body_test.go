package httpguard

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBodyLimitCheck(t *testing.T) {
	tests := []struct {
		name string
		max  int64
		cl   int64
		ok   bool
	}{
		{"zero: unknown length", 0, -1, true},
		{"zero: at default", 0, DefaultMaxBodyBytes, true},
		{"zero: over default", 0, DefaultMaxBodyBytes + 1, false},
		{"negative max means default", -5, DefaultMaxBodyBytes + 1, false},
		{"at max", 10, 10, true},
		{"over max", 10, 11, false},
		{"empty", 10, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			r.ContentLength = tt.cl
			err := bodyLimit{Max: tt.max}.Check(r)
			if (err == nil) != tt.ok || err != nil && !errors.Is(err, errBodyTooLarge) {
				t.Fatalf("Check = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// readTwice reads the body with readBody twice and through r.Body, and
// answers with the body when all three agree.
var readTwice = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	a, err := readBody(r)
	if err != nil {
		writeCheckError(w, nil, err)
		return
	}
	b, _ := readBody(r)
	c, err := io.ReadAll(r.Body)
	if err != nil || !bytes.Equal(a, c) || len(a) > 0 && &a[0] != &b[0] {
		http.Error(w, "reads disagree", http.StatusTeapot)
		return
	}
	w.Write(a)
})

func TestBodyLimitHandler(t *testing.T) {
	srv := serve(t, bodyLimit{Max: 16}.Handler(readTwice))
	direct := serve(t, bodyLimit{Max: 16}.Handler(okHandler)) // next reads r.Body only
	tests := []struct {
		name    string
		body    string
		chunked bool
		direct  bool
		status  int
	}{
		{"empty", "", false, false, 200},
		{"small", "0123456789", false, false, 200},
		{"exact", strings.Repeat("x", 16), false, false, 200},
		{"declared over", strings.Repeat("x", 17), false, false, 413},
		{"chunked small", "0123456789", true, false, 200},
		{"chunked exact", strings.Repeat("x", 16), true, false, 200},
		{"chunked over", strings.Repeat("x", 17), true, false, 413},
		{"chunked far over", strings.Repeat("x", 1<<20), true, false, 413},
		{"direct reader, chunked over", strings.Repeat("x", 17), true, true, 418},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := srv
			if tt.direct {
				s = direct
			}
			got := send(t, s, wireReq{body: tt.body, chunked: tt.chunked})
			switch tt.status {
			case 200:
				if got.status != 200 || got.body != tt.body {
					t.Fatalf("status %d body %q", got.status, got.body)
				}
			case 413:
				wantRefusal(t, got, 413, codeInvalidRequest, reasonBodyTooLarge)
			default:
				if got.status != tt.status || !strings.Contains(got.body, "request body too large") {
					t.Fatalf("status %d body %q", got.status, got.body)
				}
			}
		})
	}
}

func TestReadBodyBuffersAreNotRecycledOnceExposed(t *testing.T) {
	var kept [][]byte
	h := bodyLimit{}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := readBody(r)
		kept = append(kept, b)
	}))
	for _, body := range []string{"first body, kept", "second body!!!!!"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)))
	}
	if string(kept[0]) != "first body, kept" {
		t.Fatalf("exposed buffer was reused: %q", kept[0])
	}
}

func TestReadBodyWithoutBodyLimit(t *testing.T) {
	r := httptest.NewRequest("POST", "/", strings.NewReader("abc"))
	b, err := readBody(r)
	if err != nil || string(b) != "abc" {
		t.Fatalf("ReadBody = %q, %v", b, err)
	}
	again, _ := io.ReadAll(r.Body)
	if string(again) != "abc" {
		t.Fatalf("r.Body after ReadBody = %q", again)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", DefaultMaxBodyBytes+1)))
	if _, err := readBody(r); !errors.Is(err, errBodyTooLarge) {
		t.Fatalf("oversize ReadBody = %v", err)
	}
	r = httptest.NewRequest("POST", "/", nil)
	r.Body = nil
	if b, err := readBody(r); err != nil || len(b) != 0 {
		t.Fatalf("nil body: %q %v", b, err)
	}
}

func TestBodyShortRead(t *testing.T) {
	h := bodyLimit{}.Handler(readTwice)
	r := httptest.NewRequest("POST", "/", strings.NewReader("abc"))
	r.ContentLength = 10 // declared more than sent
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), reasonBadBody) {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
}
