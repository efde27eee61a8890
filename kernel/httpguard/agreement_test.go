package httpguard

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
)

func TestIsModernVersion(t *testing.T) {
	for v, want := range map[string]bool{"": false, "2024-11-05": false, "2025-11-25": false, "2026-07-28": true, "2027-01-01": true} {
		if IsModernVersion(v) != want {
			t.Errorf("IsModernVersion(%q) != %v", v, want)
		}
	}
}

func TestHeaderAgreementCheck(t *testing.T) {
	call := Message{ID: json.RawMessage(`1`), Method: "tools/call", Name: "list_zones"}
	read := Message{ID: json.RawMessage(`2`), Method: "resources/read", URI: "file:///café"}
	list := Message{ID: json.RawMessage(`3`), Method: "tools/list"}
	modern := func(kv ...string) http.Header {
		h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	withMeta := func(e Message, v string) Message { e.ProtocolVersion = v; return e }
	tests := []struct {
		name string
		h    http.Header
		env  Message
		ok   bool
	}{
		{"modern call agrees", modern("Mcp-Method", "tools/call", "Mcp-Name", "list_zones"), call, true},
		{"modern call, base64 name", modern("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?bGlzdF96b25lcw==?="), call, true},
		{"modern read, base64 non-ASCII uri", modern("Mcp-Method", "resources/read", "Mcp-Name", EncodeHeaderValue("file:///café")), read, true},
		{"modern list needs no name", modern("Mcp-Method", "tools/list"), list, true},
		{"modern notification", modern("Mcp-Method", "notifications/cancelled"), Message{Method: "notifications/cancelled"}, true},
		{"modern response skipped", modern(), Message{ID: json.RawMessage(`1`), Response: true}, true},
		{"future version is modern", http.Header{"Mcp-Protocol-Version": {"2027-01-01"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"other"}}, call, false},
		{"method missing", modern("Mcp-Name", "list_zones"), call, false},
		{"method differs", modern("Mcp-Method", "tools/list", "Mcp-Name", "list_zones"), call, false},
		{"method case differs", modern("Mcp-Method", "Tools/Call", "Mcp-Name", "list_zones"), call, false},
		{"method repeated", modern("Mcp-Method", "tools/call", "Mcp-Method", "tools/call", "Mcp-Name", "list_zones"), call, false},
		{"name missing", modern("Mcp-Method", "tools/call"), call, false},
		{"name differs", modern("Mcp-Method", "tools/call", "Mcp-Name", "delete_zone"), call, false},
		{"name repeated", modern("Mcp-Method", "tools/call", "Mcp-Name", "list_zones", "Mcp-Name", "list_zones"), call, false},
		{"name raw non-ASCII", modern("Mcp-Method", "resources/read", "Mcp-Name", "file:///café"), read, false},
		{"name bad base64", modern("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?***?="), call, false},
		{"name base64 of other", modern("Mcp-Method", "tools/call", "Mcp-Name", EncodeHeaderValue("delete_zone")), call, false},
		{"body lacks name", modern("Mcp-Method", "tools/call", "Mcp-Name", "x"), Message{ID: json.RawMessage(`1`), Method: "tools/call"}, false},
		{"meta version agrees", modern("Mcp-Method", "tools/list"), withMeta(list, "2026-07-28"), true},
		{"meta version differs", modern("Mcp-Method", "tools/list"), withMeta(list, "2026-08-01"), false},
		{"meta version without header", http.Header{}, withMeta(list, "2026-07-28"), false},
		{"version repeated", http.Header{"Mcp-Protocol-Version": {"2025-11-25", "2026-07-28"}}, list, false},
		{"legacy: mismatched headers ignored", http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Method": {"x"}, "Mcp-Name": {"y"}}, call, true},
		{"no version: headers ignored", http.Header{"Mcp-Method": {"x"}, "Mcp-Name": {"y"}}, call, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := headerAgreement{}.Check(tt.h, tt.env)
			if (err == nil) != tt.ok || err != nil && !errors.Is(err, errHeaderMismatch) {
				t.Fatalf("Check = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestHeaderAgreementNormalize(t *testing.T) {
	call := Message{ID: json.RawMessage(`1`), Method: "tools/call", Name: "café"}
	tests := []struct {
		name     string
		h        http.Header
		wantName string // "" means removed
		wantRest bool   // Mcp-Method and Mcp-Param-X kept
	}{
		{"modern: sentinel rewritten", http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {EncodeHeaderValue("café")}, "Mcp-Param-X": {"1"}}, "café", true},
		{"modern: plain kept", http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"café"}, "Mcp-Param-X": {"1"}}, "café", true},
		{"legacy: stripped", http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"x"}, "Mcp-Param-X": {"1"}}, "", false},
		{"no version: stripped", http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"x"}, "Mcp-Param-X": {"1"}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			headerAgreement{}.Normalize(tt.h, call)
			if got := tt.h.Get("Mcp-Name"); got != tt.wantName {
				t.Fatalf("Mcp-Name = %q, want %q", got, tt.wantName)
			}
			if (tt.h.Get("Mcp-Method") != "") != tt.wantRest || (tt.h.Get("Mcp-Param-X") != "") != tt.wantRest {
				t.Fatalf("headers after Normalize: %v", tt.h)
			}
		})
	}
}

func TestHeaderAgreementHandler(t *testing.T) {
	var seen http.Header
	var env Message
	srv := serve(t, bodyLimit{}.Handler(headerAgreement{}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		env, _ = messageFromContext(r.Context())
		okHandler.ServeHTTP(w, r)
	}))))
	const callBody = `{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"name":"get_rrset","arguments":{}}}`
	modern := func(kv ...string) map[string]string {
		m := map[string]string{"Mcp-Protocol-Version": "2026-07-28"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name   string
		h      map[string]string
		body   string
		status int
		code   int
		reason string
		id     string
	}{
		{"agrees", modern("Mcp-Method", "tools/call", "Mcp-Name", "get_rrset"), callBody, 200, 0, "", ""},
		{"base64 name", modern("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?Z2V0X3Jyc2V0?="), callBody, 200, 0, "", ""},
		{"name mismatch echoes id", modern("Mcp-Method", "tools/call", "Mcp-Name", "delete_rrset"), callBody, 400, codeHeaderMismatch, reasonHeaderMismatch, `"req-7"`},
		{"method missing", modern("Mcp-Name", "get_rrset"), callBody, 400, codeHeaderMismatch, reasonHeaderMismatch, `"req-7"`},
		{"legacy mismatch served, headers stripped", map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "x", "Mcp-Name": "y"}, callBody, 200, 0, "", ""},
		{"not JSON", nil, `{"jsonrpc":`, 400, codeParseError, reasonParseError, ""},
		{"batch", nil, `[` + callBody + `]`, 400, codeInvalidRequest, reasonBatchUnsupported, ""},
		{"not JSON-RPC", nil, `{"id":1,"method":"a"}`, 400, codeInvalidRequest, reasonInvalidRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = nil
			got := send(t, srv, wireReq{headers: tt.h, body: tt.body})
			if tt.status != 200 {
				wantRefusal(t, got, tt.status, tt.code, tt.reason)
				if string(got.rpc.ID) != tt.id {
					t.Fatalf("id = %s, want %s", got.rpc.ID, tt.id)
				}
				if seen != nil {
					t.Fatal("next handler ran")
				}
				return
			}
			wantOK(t, got)
			if env.Name != "get_rrset" || string(env.ID) != `"req-7"` {
				t.Fatalf("MessageFromContext = %+v", env)
			}
			if tt.h["Mcp-Protocol-Version"] == "2026-07-28" && seen.Get("Mcp-Name") != "get_rrset" {
				t.Fatalf("Mcp-Name forwarded as %q", seen.Get("Mcp-Name"))
			}
			if tt.h["Mcp-Protocol-Version"] == "2025-11-25" && (seen.Get("Mcp-Name") != "" || seen.Get("Mcp-Method") != "") {
				t.Fatalf("legacy mirrored headers forwarded: %v", seen)
			}
		})
	}
}
