package hetzner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// testToken is distinctive so that any leak into an error text is found.
const testToken = "hzTOKEN-5b1e-DISTINCTIVE-c0ffee-0123456789abcdef0123456789abcdef"

// readToken is the fake's Read token.
const readToken = "hzREAD-ONLY-9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddccbbaa9988"

func noSleep(context.Context, time.Duration) error { return nil }

// testHTTP are upstream options for tests: short timeout, no real waits.
func testHTTP() *upstream.Options {
	return &upstream.Options{Timeout: 5 * time.Second, Sleep: noSleep}
}

// startFake runs the fake and a client with the read-write token.
func startFake(t *testing.T, opts *hetznerapi.Options) (*hetznerapi.Server, *Client) {
	t.Helper()
	if opts == nil {
		opts = &hetznerapi.Options{}
	}
	opts.Token, opts.ReadOnlyToken = testToken, readToken
	fake := hetznerapi.Start(t, opts)
	return fake, newClient(t, fake.URL(), StaticToken(testToken), testHTTP())
}

func newClient(t *testing.T, base string, creds Credentials, h *upstream.Options) *Client {
	t.Helper()
	c, err := New(base, creds, &Options{HTTP: h})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// apiErr asserts err is a *dns.Error with code and status.
func apiErr(t *testing.T, err error, code string, status int) *dns.Error {
	t.Helper()
	var de *dns.Error
	if !errors.As(err, &de) {
		t.Fatalf("err = %v (%T), want *dns.Error %s", err, err, code)
	}
	if de.Code != code || de.Status != status {
		t.Fatalf("error %s/%d (%q), want %s/%d", de.Code, de.Status, de.Message, code, status)
	}
	noToken(t, err)
	return de
}

// noToken asserts that no text of err carries the token.
func noToken(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	texts := []string{err.Error()}
	var de *dns.Error
	if errors.As(err, &de) {
		texts = append(texts, de.Message)
		for _, f := range de.Fields {
			texts = append(texts, f.Name)
			texts = append(texts, f.Messages...)
		}
	}
	for _, s := range texts {
		for _, tok := range []string{testToken, readToken, testToken[:20]} {
			if strings.Contains(s, tok) {
				t.Fatalf("error text leaks the token: %q", s)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
