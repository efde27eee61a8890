package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const secret = "dd-secret-value-1234"

var datadog = CredentialSpec{Provider: "Datadog", Headers: []string{"DD-API-KEY", "DD-APPLICATION-KEY"}}

func ddHeaders() http.Header {
	h := http.Header{}
	h.Set("DD-API-KEY", secret)
	h.Set("Dd-Application-Key", "app-"+secret)
	return h
}

func TestCredentialsNeverPrint(t *testing.T) {
	c := ExtractCredentials(ddHeaders(), datadog)
	type holder struct {
		Creds Credentials
		creds Credentials
		Ptr   *Credentials
	}
	h := holder{Creds: c, creds: c, Ptr: &c}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T", "%p"} {
		out = append(out, fmt.Sprintf(verb, c), fmt.Sprintf(verb, h), fmt.Sprintf(verb, &c))
	}
	out = append(out, fmt.Sprint(c), fmt.Sprintln(c, h))
	js, _ := json.Marshal(h)
	out = append(out, string(js))
	var logs bytes.Buffer
	for _, handler := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(handler).Info("x", "creds", c, "holder", h, slog.Any("any", c))
	}
	out = append(out, logs.String())
	for _, s := range out {
		if strings.Contains(s, "secret") || strings.Contains(strings.ToLower(s), strings.ToLower(fmt.Sprintf("%x", secret))) {
			t.Fatalf("credential printed: %s", s)
		}
	}
	if fmt.Sprint(c) != "[redacted]" || fmt.Sprintf("%#v", c) != "[redacted]" {
		t.Fatalf("fmt shows %q / %q", fmt.Sprint(c), fmt.Sprintf("%#v", c))
	}
}

func TestRequire(t *testing.T) {
	dup := ddHeaders()
	dup.Add("DD-API-KEY", "second")
	partial := http.Header{}
	partial.Set("DD-API-KEY", secret)
	empty := ddHeaders()
	empty.Set("DD-API-KEY", " ")
	huge := ddHeaders()
	huge.Set("DD-API-KEY", strings.Repeat("k", 9000))
	tests := []struct {
		name string
		ctx  context.Context
		ok   bool
	}{
		{"present", WithCredentials(t.Context(), ExtractCredentials(ddHeaders(), datadog)), true},
		{"fixed (stdio)", WithCredentials(t.Context(), FixedCredentials(map[string]string{"dd-api-key": secret, "DD-APPLICATION-KEY": "a"})), true},
		{"no credentials in context", t.Context(), false},
		{"one header missing", WithCredentials(t.Context(), ExtractCredentials(partial, datadog)), false},
		{"header sent twice", WithCredentials(t.Context(), ExtractCredentials(dup, datadog)), false},
		{"blank value", WithCredentials(t.Context(), ExtractCredentials(empty, datadog)), false},
		{"too long", WithCredentials(t.Context(), ExtractCredentials(huge, datadog)), false},
		{"fixed empty value", WithCredentials(t.Context(), FixedCredentials(map[string]string{"DD-API-KEY": secret, "DD-APPLICATION-KEY": ""})), false},
		{"other provider's headers", WithCredentials(t.Context(), ExtractCredentials(ddHeaders(), CredentialSpec{Provider: "X", Headers: []string{"X-Key"}})), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Require(tt.ctx, datadog)
			if tt.ok {
				if err != nil || got["DD-API-KEY"] == "" || got["DD-APPLICATION-KEY"] == "" || len(got) != 2 {
					t.Fatalf("got %v, %v", len(got), err)
				}
				return
			}
			var me *MissingCredentialsError
			if got != nil || err == nil || err.Error() != "Missing Datadog credentials" ||
				!errors.Is(err, ErrMissingCredentials) || !errors.As(err, &me) {
				t.Fatalf("got %d values, %v", len(got), err)
			}
		})
	}
	if _, err := Require(t.Context(), CredentialSpec{Provider: "Empty"}); err == nil {
		t.Fatal("a spec with no headers must not succeed")
	}
}

func TestCredentialMiddleware(t *testing.T) {
	var seen http.Header
	var creds Credentials
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, creds = r.Header, CredentialsFromContext(r.Context())
	})
	mw, err := CredentialMiddleware(datadog)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header = ddHeaders()
	r.Header.Set("Accept", "application/json")
	mw(next).ServeHTTP(httptest.NewRecorder(), r)
	if seen.Get("DD-API-KEY") != "" || seen.Get("DD-APPLICATION-KEY") != "" || seen.Get("Accept") == "" {
		t.Fatalf("headers passed on: %v", seen)
	}
	if names := creds.Names(); strings.Join(names, ",") != "Dd-Api-Key,Dd-Application-Key" {
		t.Fatalf("names %v", names)
	}
	if r.Header.Get("DD-API-KEY") == "" {
		t.Fatal("caller's header map mutated")
	}
}

func TestCredentialSpecValidate(t *testing.T) {
	bad := []CredentialSpec{
		{Provider: "", Headers: []string{"X-Key"}},
		{Provider: "P", Headers: nil},
		{Provider: "P", Headers: []string{"Bad Header"}},
		{Provider: "P", Headers: []string{"X-Key\r\nInjected: 1"}},
		{Provider: "P", Headers: []string{"authorization"}},
		{Provider: "P", Headers: []string{"x-api-key"}},
		{Provider: "P", Headers: []string{"Cookie"}},
		{Provider: "P", Headers: []string{"X-Key", "x-key"}},
	}
	for _, s := range bad {
		if s.Validate() == nil {
			t.Errorf("%+v accepted", s)
		}
		if _, err := CredentialMiddleware(s); err == nil {
			t.Errorf("middleware accepted %+v", s)
		}
	}
	if err := datadog.Validate(); err != nil {
		t.Fatal(err)
	}
}
