package httpguard

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Message
		err  error
	}{
		{"tools/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_zones","arguments":{"a":[1,{"b":null}]}}}`,
			Message{ID: json.RawMessage(`1`), Method: "tools/call", Name: "list_zones", Arguments: json.RawMessage(`{"a":[1,{"b":null}]}`)}, nil},
		{"arguments without surrounding space", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments" :  [1] }}`,
			Message{ID: json.RawMessage(`1`), Method: "tools/call", Name: "a", Arguments: json.RawMessage(`[1]`)}, nil},
		{"params the kernel does not read", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{}}}`,
			Message{ID: json.RawMessage(`1`), Method: "tools/call", Name: "a", OtherParams: true}, nil},
		{"_meta not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":[]}}`,
			Message{ID: json.RawMessage(`1`), Method: "tools/call", Name: "a", OtherParams: true}, nil},
		{"string id and meta", `{"jsonrpc":"2.0","id":"x-1","method":"resources/read","params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","other":{}}}}`,
			Message{ID: json.RawMessage(`"x-1"`), Method: "resources/read", URI: "file:///a", ProtocolVersion: "2026-07-28", OtherParams: true,
				Meta: json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","other":{}}`)}, nil},
		{"members in any order, whitespace", " {\n\"params\" : {\"name\":\"p\"} , \"method\":\"prompts/get\",\"id\":-2500,\"jsonrpc\":\"2.0\"}\t",
			Message{ID: json.RawMessage(`-2500`), Method: "prompts/get", Name: "p"}, nil},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Message{Method: "notifications/initialized"}, nil},
		{"null params", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`, Message{ID: json.RawMessage(`1`), Method: "tools/list"}, nil},
		{"escaped strings", `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"n\u0061me":"caf\u00e9 \"x\""}}`,
			Message{ID: json.RawMessage(`1`), Method: "tools/call", Name: `café "x"`}, nil},
		{"non-string name ignored", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, Message{ID: json.RawMessage(`1`), Method: "tools/call", OtherParams: true}, nil},
		{"case-sensitive keys", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"a"}}`, Message{ID: json.RawMessage(`1`), Method: "tools/call", OtherParams: true}, nil},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{}}`, Message{ID: json.RawMessage(`3`), Response: true}, nil},
		{"error response", `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}`, Message{ID: json.RawMessage(`3`), Response: true}, nil},

		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"a"}]`, Message{}, errBatch},
		{"broken batch", `[{"jsonrpc":"2.0"`, Message{}, errInvalidJSON},
		{"empty", ``, Message{}, errInvalidJSON},
		{"spaces", "  \n", Message{}, errInvalidJSON},
		{"string", `"x"`, Message{}, errInvalidMessage},
		{"trailing data", `{"jsonrpc":"2.0","method":"a"}{"jsonrpc":"2.0","method":"b"}`, Message{}, errInvalidJSON},
		{"trailing comma", `{"jsonrpc":"2.0","method":"a",}`, Message{}, errInvalidJSON},
		{"unterminated", `{"jsonrpc":"2.0","method":"a"`, Message{}, errInvalidJSON},
		{"control char in string", "{\"jsonrpc\":\"2.0\",\"method\":\"a\x01\"}", Message{}, errInvalidJSON},
		{"bad escape", `{"jsonrpc":"2.0","method":"\x"}`, Message{}, errInvalidJSON},
		{"bad number", `{"jsonrpc":"2.0","id":01,"method":"a"}`, Message{}, errInvalidJSON},
		{"bad literal", `{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":tru}}`, Message{}, errInvalidJSON},
		{"missing jsonrpc", `{"id":1,"method":"a"}`, Message{}, errInvalidMessage},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"a"}`, Message{}, errInvalidMessage},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"a"}`, Message{}, errInvalidMessage},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"a"}`, Message{}, errInvalidMessage},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"a"}`, Message{}, errInvalidMessage},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":1}`, Message{}, errInvalidMessage},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, Message{}, errInvalidMessage},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"a","params":[1]}`, Message{}, errInvalidMessage},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`, Message{}, errInvalidMessage},
		{"duplicate escaped key", `{"jsonrpc":"2.0","id":1,"method":"a","m\u0065thod":"b"}`, Message{}, errInvalidMessage},
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, Message{}, errInvalidMessage},
		{"duplicate version", `{"jsonrpc":"2.0","id":1,"method":"a","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1","io.modelcontextprotocol/protocolVersion":"2"}}}`, Message{}, errInvalidMessage},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`, Message{}, errInvalidMessage},
		{"duplicate arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1},"arguments":{"a":2}}}`, Message{}, errInvalidMessage},
		{"id over float64", `{"jsonrpc":"2.0","id":1e400,"method":"a"}`, Message{}, errInvalidMessage},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"a"}`, Message{}, errInvalidMessage},
		{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"a"}`, Message{}, errInvalidMessage},
		{"id over 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"a"}`, Message{}, errInvalidMessage},
		{"id 2^53", `{"jsonrpc":"2.0","id":-9007199254740992,"method":"a"}`, Message{ID: json.RawMessage(`-9007199254740992`), Method: "a"}, nil},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"a","result":{}}`, Message{}, errInvalidMessage},
		{"nothing", `{"jsonrpc":"2.0","id":1}`, Message{}, errInvalidMessage},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, Message{}, errInvalidMessage},
		{"invalid UTF-8 name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}", Message{}, errInvalidMessage},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`, Message{}, errInvalidJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMessage([]byte(tt.in))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessageTargetAndNotification(t *testing.T) {
	tests := []struct {
		env    Message
		target string
		ok     bool
		notif  bool
	}{
		{Message{Method: "tools/call", Name: "t", URI: "u", ID: json.RawMessage(`1`)}, "t", true, false},
		{Message{Method: "prompts/get", Name: "p"}, "p", true, true},
		{Message{Method: "resources/read", Name: "n", URI: "u"}, "u", true, true},
		{Message{Method: "tools/list", Name: "n"}, "", false, true},
		{Message{Response: true, ID: json.RawMessage(`1`)}, "", false, false},
	}
	for _, tt := range tests {
		target, ok := tt.env.Target()
		if target != tt.target || ok != tt.ok || tt.env.isNotification() != tt.notif {
			t.Errorf("%+v: Target = %q %v, IsNotification = %v", tt.env, target, ok, tt.env.isNotification())
		}
	}
}

func TestRequestMessageParsesOnce(t *testing.T) {
	var first, second Message
	var fromCtx bool
	h := bodyLimit{}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first, _ = RequestMessage(r)
		r.Body = nil // a second parse would have nothing to read
		second, _ = RequestMessage(r)
		_, fromCtx = messageFromContext(r.Context())
	}))
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)))
	if first.Name != "t" || !cmp.Equal(first, second) || !fromCtx {
		t.Fatalf("first %+v second %+v fromCtx %v", first, second, fromCtx)
	}
	if _, ok := messageFromContext(httptest.NewRequest("POST", "/", nil).Context()); ok {
		t.Fatal("MessageFromContext without a parse reported ok")
	}
}

// FuzzParseMessage checks the parser against encoding/json: whatever it
// accepts is valid JSON, and the members it extracts are the ones a
// case-sensitive standard decode finds.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"file:///x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"a\u0062","params":{"name":"\ud800"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := ParseMessage(data)
		if err != nil {
			if errors.Is(err, errInvalidJSON) && json.Valid(data) && !deep(data) {
				t.Fatalf("valid JSON reported as invalid: %q", data)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("accepted non-object %q", data)
		}
		var method string
		if raw, ok := m["method"]; ok {
			if json.Unmarshal(raw, &method) != nil || method != env.Method {
				t.Fatalf("method %q, encoding/json says %s", env.Method, raw)
			}
		}
		var params map[string]json.RawMessage
		if raw, ok := m["params"]; ok && string(raw) != "null" {
			json.Unmarshal(raw, &params)
		}
		var name string
		if raw, ok := params["name"]; ok && json.Unmarshal(raw, &name) == nil && name != env.Name {
			t.Fatalf("name %q, encoding/json says %s", env.Name, raw)
		}
		if raw, ok := m["id"]; ok && string(raw) != string(env.ID) {
			t.Fatalf("id %s, encoding/json says %s", env.ID, raw)
		}
		// Arguments and _meta are the bytes a decoder's RawMessage keeps.
		if raw := params["arguments"]; string(raw) != string(env.Arguments) {
			t.Fatalf("arguments %s, encoding/json says %s", env.Arguments, raw)
		}
		if raw := params["_meta"]; len(raw) > 0 && raw[0] == '{' && string(raw) != string(env.Meta) {
			t.Fatalf("_meta %s, encoding/json says %s", env.Meta, raw)
		}
		// The raw members share one allocation, each capped: appending to
		// one never changes another, and an absent one is nil.
		meta, id := string(env.Meta), string(env.ID)
		_ = append(env.Arguments, "xxxxxxxx"...)
		_ = append(env.Meta, "yyyy"...)
		if string(env.Meta) != meta || string(env.ID) != id {
			t.Fatalf("appending to one member changed another: _meta %s, id %s", env.Meta, env.ID)
		}
		if _, ok := params["arguments"]; !ok && env.Arguments != nil {
			t.Fatalf("no arguments, but Arguments %q", env.Arguments)
		}
	})
}

// deep reports nesting beyond the parser's cap (valid JSON it may refuse).
func deep(data []byte) bool {
	depth, deepest := 0, 0
	for _, c := range data {
		switch c {
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest > jsonscan.DefaultMaxDepth-2
}

func TestMessageWantsNotifications(t *testing.T) {
	for body, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"p"}}}`:                       true,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/logLevel":"info"}}}`: true,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"other":"progressToken"}}}`:                   false,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progressToken"}}`:                                         false,
	} {
		env, err := ParseMessage([]byte(body))
		if err != nil || env.WantsNotifications != want {
			t.Errorf("%s: %v %v", body, env.WantsNotifications, err)
		}
	}
}
