package upstream_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

func TestHTTPClientCapsBodiesAndRefusesRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, strings.Repeat("x", 2048))
		case "/small":
			io.WriteString(w, "ok")
		default:
			http.Redirect(w, r, "http://example.invalid/", http.StatusFound)
		}
	}))
	defer srv.Close()
	hc := upstream.New(&upstream.Options{MaxBodyBytes: 1024}).HTTPClient()
	get := func(path string) ([]byte, error) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	if b, err := get("/small"); err != nil || string(b) != "ok" {
		t.Fatalf("small: %q, %v", b, err)
	}
	if b, err := get("/big"); !errors.Is(err, upstream.ErrResponseTooLarge) || len(b) > 1024 {
		t.Fatalf("big: %d bytes, %v; want ErrResponseTooLarge after at most 1024", len(b), err)
	}
	if _, err := get("/redirect"); !errors.Is(err, upstream.ErrRedirect) {
		t.Fatalf("redirect: %v, want ErrRedirect", err)
	}
}
