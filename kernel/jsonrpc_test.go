package kernel_test

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// TestRepeatedArgumentKeysRefused (issue 10.12): arguments that repeat a
// key, at any depth, are refused as a tool error before anything runs, on
// HTTP and on stdio alike; a message with two arguments members is refused
// by the HTTP guards as an invalid request. Before, the last value won
// while a host UI may have shown the person the first.
func TestRepeatedArgumentKeysRefused(t *testing.T) {
	cases := []struct{ name, args, key string }{
		{"top level", `{"zone":"z","name":"shown","name":"run"}`, `"name"`},
		{"escaped twin", `{"zone":"z","name":"shown","n\u0061me":"run"}`, `"name"`},
		{"nested", `{"zone":"z","name":"n","extra":{"k":1,"k":2}}`, `"k"`},
	}
	body := func(id int, args string) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"get_item","arguments":` + args + `}}`
	}
	t.Run("http", func(t *testing.T) {
		f := newHTTPFixture(t, 100, false)
		auth := map[string]string{"Authorization": "Bearer " + apiKey}
		for _, c := range cases {
			resp, got := post(t, f.url, body(7, c.args), auth)
			if resp.StatusCode != 200 || !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `repeat the key `+strings.ReplaceAll(c.key, `"`, `\"`)) {
				t.Errorf("%s: %d %s", c.name, resp.StatusCode, got)
			}
		}
		twice := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_item","arguments":{"zone":"z","name":"a"},"arguments":{"zone":"z","name":"b"}}}`
		resp, got := post(t, f.url, twice, auth)
		if resp.StatusCode != 400 || !strings.Contains(got, `"code":-32600`) {
			t.Errorf("two arguments members: %d %s", resp.StatusCode, got)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		f := newFixture(t, kernel.Options{})
		lines := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
		for i, c := range cases {
			lines += body(10+i, c.args) + "\n"
		}
		var out syncWriter
		if err := f.srv.ServeStdio(context.Background(), io.NopCloser(strings.NewReader(lines)), &out); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		for _, c := range cases {
			if !strings.Contains(got, `repeat the key `+strings.ReplaceAll(c.key, `"`, `\"`)) {
				t.Errorf("%s: not refused: %s", c.name, got)
			}
		}
		if strings.Contains(got, `"isError":false`) || strings.Count(got, `"isError":true`) != len(cases) {
			t.Errorf("answers: %s", got)
		}
	})
}

// TestNumericIDsKeptExact (issue 10.13): a JSON-RPC id the go-sdk cannot
// hold exactly (1e400 overflowed its decoder, which answered a text/plain
// 400 naming Go types) gets a JSON-RPC error body: -32600, JSON content
// type, no Go internals.
func TestNumericIDsKeptExact(t *testing.T) {
	f := newHTTPFixture(t, 100, false)
	auth := map[string]string{"Authorization": "Bearer " + apiKey}
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_item","arguments":{"zone":"z","name":"n"}}}`
	}
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{`1e400`, false},
		{`-1e400`, false},
		{`1.5`, false},
		{`9007199254740993`, false},
		{`1e300`, false},
		{`7`, true},
		{`-2.5e3`, false},
		{`1e3`, false},
		{`-0`, true},
		{`9007199254740992`, true},
		{`"1e400"`, true},
	} {
		resp, body := post(t, f.url, call(tt.id), auth)
		if tt.ok {
			if resp.StatusCode != 200 {
				t.Errorf("id %s: %d %s", tt.id, resp.StatusCode, body)
			}
			continue
		}
		var e struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		err := json.Unmarshal([]byte(body), &e)
		if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" || err != nil ||
			e.JSONRPC != "2.0" || e.Error.Code != -32600 || e.ID != nil {
			t.Errorf("id %s: %d %q %s", tt.id, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		for _, internal := range []string{"float64", "unmarshal", "Go value", "strconv", "jsonscan"} {
			if strings.Contains(body, internal) {
				t.Errorf("id %s: the answer names %q: %s", tt.id, internal, body)
			}
		}
	}
}
