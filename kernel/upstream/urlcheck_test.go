package upstream

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCheckURLRefusesBeforeSending: a URL that Options.CheckURL refuses is
// never sent, on the first attempt or any retry, and the error names the
// reason, never the URL; an accepted URL is sent as it is.
func TestCheckURLRefusesBeforeSending(t *testing.T) {
	var hits atomic.Int32
	var seen atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		seen.Store(r.URL.EscapedPath())
	}))
	defer srv.Close()
	errSecret := errors.New("route not allowed")
	var asked []string
	c := New(&Options{CheckURL: func(u *url.URL) error {
		asked = append(asked, u.EscapedPath())
		if strings.Contains(u.EscapedPath(), "secret") {
			return errSecret
		}
		return nil
	}})
	_, err := c.Do(t.Context(), authReq(t, "GET", srv.URL+"/v2/secret%2Fpath?q=hidden"))
	if !errors.Is(err, ErrURLRefused) || !errors.Is(err, errSecret) {
		t.Fatalf("err = %v, want ErrURLRefused wrapping the check's error", err)
	}
	assertClean(t, err, "hidden", srv.URL)
	if hits.Load() != 0 {
		t.Fatalf("a refused URL reached the server %d times", hits.Load())
	}
	resp, err := c.Do(t.Context(), authReq(t, "GET", srv.URL+"/v2/go/golang.org%2Fx%2Fnet"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("accepted URL: %v %v", resp, err)
	}
	if got := seen.Load(); got != "/v2/go/golang.org%2Fx%2Fnet" || len(asked) != 2 || asked[1] != got {
		t.Fatalf("sent %v, asked about %q", got, asked)
	}
}
