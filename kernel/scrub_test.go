package kernel_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

const (
	serverToken = "hzCONFIGURED-Kq7Wz9Rt3Vx-MnPbLsJdQgHy"
	byokToken   = "byok&<QzXv>-Wq8TzK-Gh4Jk5Lm/NpRsTu"
)

type echoArgs struct {
	Form string `json:"form" jsonschema:"how the upstream echoes the credential"`
}

// echoForms are the ways a hostile upstream puts the credential it was
// sent into an answer. Each returns the handler's result or error.
var echoForms = map[string]func(ctx context.Context, c *kernel.Call, tok string) (any, error){
	"json": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return map[string]any{"zone": map[string]any{"name": "example.com", "note": "your header was Bearer " + tok}}, nil
	},
	"json_key": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return map[string]any{tok: "value"}, nil
	},
	"json_escaped": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		var b strings.Builder
		for _, r := range tok {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return json.RawMessage(`{"note":"` + b.String() + `"}`), nil
	},
	"zero_width": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return map[string]any{"note": strings.Join(strings.Split(tok, ""), "\u200b")}, nil
	},
	"cut": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		m := map[string]any{}
		for k := 5; k < len(tok); k++ { // each field leaks k characters
			m[fmt.Sprint("f", k)] = strings.Repeat("x", 4000-k) + tok
		}
		return m, nil
	},
	"basic": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return map[string]any{"seen": "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+tok))}, nil
	},
	"text": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return kernel.Text("; zone file\n; token " + tok + "\nwww IN TXT \"" + tok + "\"\n"), nil
	},
	"text_cut": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return kernel.Text(strings.Repeat("y", 200_000-len(tok)/2) + tok), nil
	},
	"error": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return nil, kernel.Errorf(kernel.NotFound, "Zone %s was not found.", tok).WithUpstream("token "+tok+" is invalid").WithHint("try %s", tok)
	},
	"internal": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return nil, fmt.Errorf("upstream said: %s", tok)
	},
	"notifications": func(ctx context.Context, c *kernel.Call, tok string) (any, error) {
		c.Progress(ctx, 1, 2, "sent "+tok)
		c.Log(ctx, slog.LevelInfo, "using "+tok, map[string]any{"header": "Bearer " + tok})
		return map[string]any{"ok": true}, nil
	},
	"content": func(_ context.Context, _ *kernel.Call, tok string) (any, error) {
		return kernel.Content{&mcp.TextContent{Text: "a " + tok}, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "x:y", Text: tok}}}, nil
	},
}

func echoTool() kernel.Tool {
	return kernel.NewTool(kernel.Spec[echoArgs, any]{
		Name: "echo", Description: "A hostile upstream that echoes the credential.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in echoArgs) (any, error) {
			tok, err := c.Credential("upstream")
			if err != nil {
				return nil, err
			}
			return echoForms[in.Form](ctx, c, tok)
		},
	})
}

// wireOf is everything the client received for a call: the result as JSON,
// and the notifications.
func wireOf(res *mcp.CallToolResult) string {
	b, _ := json.Marshal(res)
	return string(b)
}

// lacksSecret fails when any run of 5 letters, digits or hyphens of tok
// appears in the text.
func lacksSecret(t *testing.T, channel, text, tok string) {
	t.Helper()
	for _, form := range []string{tok} {
		for i := 0; i+5 <= len(form); i++ {
			piece := form[i : i+5]
			if strings.ContainsFunc(piece, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }) {
				continue
			}
			if strings.Contains(text, piece) {
				t.Errorf("%s: %q (a piece of the credential) reached the client:\n%.600s", channel, piece, text)
				return
			}
		}
	}
}

// A hostile upstream echoes the server's configured credential into a
// successful answer in every form the table lists; nothing of it reaches
// the client, on any channel, nor the log or the audit.
func TestConfiguredCredentialEchoIsScrubbed(t *testing.T) {
	var log bytes.Buffer
	var auditLog mcptest.AuditLog
	opts := kernel.Options{
		Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Value: serverToken}},
		Logger:      slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Audit:       &auditLog,
	}
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{echoTool()}, &opts)
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, srv, nil)
	for form := range echoForms {
		t.Run(form, func(t *testing.T) {
			res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"form": form},
				Meta: mcp.Meta{"progressToken": "p1"}})
			if err != nil {
				t.Fatal(err)
			}
			wire := wireOf(res)
			lacksSecret(t, "result", wire, serverToken)
			if b := base64.StdEncoding.EncodeToString([]byte("user:" + serverToken)); strings.Contains(wire, b[12:40]) {
				t.Errorf("the credential's base64 reached the client: %.400s", wire)
			}
			if form != "internal" && form != "notifications" && !strings.Contains(wire, "[redacted]") {
				t.Errorf("no [redacted] marker: %.400s", wire)
			}
			if res.StructuredContent != nil {
				raw, _ := json.Marshal(res.StructuredContent)
				if !json.Valid(raw) {
					t.Errorf("structured content broken: %s", raw)
				}
			}
		})
	}
	notes := sess.Progress(1)
	if len(notes) == 0 {
		t.Error("no progress notification")
	}
	b, _ := json.Marshal(notes)
	lacksSecret(t, "progress", string(b), serverToken)
	lacksSecret(t, "transcript (log notifications)", sess.Transcript(), serverToken)
	a, _ := json.Marshal(auditLog.Records())
	lacksSecret(t, "audit", string(a), serverToken)
	lacksSecret(t, "server log", log.String(), serverToken)
	if !strings.Contains(log.String(), "secrets appeared in a message to the client") {
		t.Errorf("the operator was not told: %s", log.String())
	}
}

// A numeric credential echoed as a JSON number is found too: the number
// becomes the string "[redacted]", and the rest of the answer passes.
func TestNumericSecretIsScrubbed(t *testing.T) {
	const numeric = "904412345678"
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{kernel.NewTool(kernel.Spec[echoArgs, json.RawMessage]{
		Name: "echo_number", Description: "Echoes the token as a number.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in echoArgs) (json.RawMessage, error) {
			tok, _ := c.Credential("upstream")
			return json.RawMessage(`{"id":` + tok + `,"zone":"example.com"}`), nil
		},
	})}, &kernel.Options{Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Value: numeric}}})
	if err != nil {
		t.Fatal(err)
	}
	res := mcptest.Connect(t, srv, nil).Call(t, "echo_number", map[string]any{"form": "n"})
	wire := wireOf(res)
	if res.IsError || strings.Contains(wire, numeric) || !strings.Contains(wire, "example.com") || !strings.Contains(wire, `"id":"[redacted]"`) {
		t.Fatalf("want the number redacted and the rest passed: %s", wire)
	}
}

// Under BYOK the caller's own credential, taken from its request header, is
// scrubbed as well as the configured one — over HTTP, through the protocol.
func TestBYOKCredentialEchoIsScrubbed(t *testing.T) {
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(apiKey) + " pro alice\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{echoTool()}, &kernel.Options{BYOK: true,
		Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Header: "X-Example-Token"}}})
	if err != nil {
		t.Fatal(err)
	}
	endpoint := mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{Auth: keys})
	hdr := map[string]string{"Authorization": "Bearer " + apiKey, "X-Example-Token": byokToken}
	for _, form := range []string{"json", "json_key", "json_escaped", "zero_width", "cut", "text", "error", "basic"} {
		t.Run(form, func(t *testing.T) {
			_, body := post(t, endpoint, callBody("echo", map[string]any{"form": form}), hdr)
			lacksSecret(t, "HTTP body", body, byokToken)
			if !strings.Contains(body, "[redacted]") {
				t.Errorf("no [redacted] marker: %.400s", body)
			}
		})
	}
}

// RegisterSecrets is how a server adds a secret it brings into a call (a
// key loaded for the caller, a credential's part it relays alone): the
// egress gate removes it, in every form, from the result, the call's
// notifications and the rest of the session, and the kernel from its log
// lines and audit record — over stdio (in process) and over HTTP, on the
// fast path and the go-sdk's.
func TestRegisterSecrets(t *testing.T) {
	const derived = "derived-PART-9f3k2m1x"
	tool := kernel.NewTool(kernel.Spec[struct{}, any]{
		Name: "fetch", Description: "Loads a key for the caller and echoes it.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, _ struct{}) (any, error) {
			c.RegisterSecrets(derived)
			c.Log(ctx, slog.LevelInfo, "loaded "+derived, map[string]any{"k": derived})
			return map[string]any{"a": derived, "b": base64.StdEncoding.EncodeToString([]byte("k=" + derived)),
				"c": strings.Join(strings.Split(derived, ""), "\u00ad"), derived: 1}, nil
		},
	})
	var log bytes.Buffer
	var auditLog mcptest.AuditLog
	newServer := func() *kernel.Server {
		srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool},
			&kernel.Options{Logger: slog.New(slog.NewTextHandler(&log, nil)), Audit: &auditLog})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	sess := mcptest.Connect(t, newServer(), nil)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	lacksSecret(t, "in-process result", wireOf(res), derived)
	lacksSecret(t, "in-process transcript", sess.Transcript(), derived)
	for _, disable := range []bool{false, true} {
		endpoint := mcptest.ServeHTTP(t, newServer(), kernel.HTTPOptions{DisableFastPath: disable})
		_, body := post(t, endpoint, callBody("fetch", map[string]any{}), nil)
		lacksSecret(t, fmt.Sprintf("HTTP body (sdk=%v)", disable), body, derived)
		if !strings.Contains(body, "[redacted]") {
			t.Errorf("no [redacted] marker: %.400s", body)
		}
	}
	lacksSecret(t, "server log", log.String(), derived)
	a, _ := json.Marshal(auditLog.Records())
	lacksSecret(t, "audit", string(a), derived)
}

// TestFastPathStreamIsScrubbed: over HTTP, on the fast path and on the
// go-sdk path, a call that asks for progress and a log level is answered as
// an event stream, and nothing of the configured credential reaches that
// stream — progress, log notifications or result — in any echo form.
func TestFastPathStreamIsScrubbed(t *testing.T) {
	for _, disable := range []bool{false, true} {
		srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{echoTool()}, &kernel.Options{
			Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Value: serverToken}},
			Logger:      slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		h, err := srv.HTTPHandler(kernel.HTTPOptions{Addr: fastAddr, DisableFastPath: disable,
			Guards: httpguard.PipelineOptions{DisableFlood: true}})
		if err != nil {
			t.Fatal(err)
		}
		for form := range echoForms {
			t.Run(fmt.Sprintf("sdk=%v/%s", disable, form), func(t *testing.T) {
				body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"form":"` + form +
					`"},"_meta":{"progressToken":"p1","io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
				q := fastRequest{body: body, version: "2026-07-28", mirror: true}
				r := q.build()
				r.Header.Del("Authorization")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					t.Fatalf("status %d: %.300s", w.Code, w.Body.String())
				}
				wire := w.Body.String()
				if ct := w.Header().Get("Content-Type"); ct != "text/event-stream" {
					t.Fatalf("answered as %q, not an event stream", ct)
				}
				if form == "notifications" && (!strings.Contains(wire, "notifications/progress") || !strings.Contains(wire, "notifications/message") || !strings.Contains(wire, "[redacted]")) {
					t.Fatalf("the stream lacks the scrubbed progress and log notifications: %.800s", wire)
				}
				lacksSecret(t, "stream", wire, serverToken)
			})
		}
	}
}

// Options.Secrets and AddSecrets take values the egress gate can remove
// safely, and refuse the others without quoting them.
func TestServerSecretsChecked(t *testing.T) {
	for _, v := range []string{"", "  ", "short-s3cret"[:8]} {
		if _, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, nil, &kernel.Options{Secrets: []string{v}}); err == nil {
			t.Errorf("Options.Secrets accepted a %d-byte value", len(v))
		} else if v != "" && strings.Contains(err.Error(), v) {
			t.Errorf("the error quotes the value: %v", err)
		}
	}
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{echoTool()}, &kernel.Options{Secrets: []string{"operator-ai-key-0123"},
		Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Value: serverToken}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddSecrets("tiny"); err == nil {
		t.Error("AddSecrets accepted a 4-byte value")
	}
	if err := srv.AddSecrets("credential-file-value-42"); err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%v %+v %#v", srv, srv, srv); strings.Contains(s, "operator-ai-key") || strings.Contains(s, "credential-file-value") {
		t.Fatalf("a printer shows a secret: %.300s", s)
	}
	// both reach no client, in any form the gate finds
	leak := kernel.NewTool(kernel.Spec[struct{}, any]{Name: "leak", Description: "Echoes the operator's secrets.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, struct{}) (any, error) {
			return map[string]any{"a": "operator-ai-key-0123", "b": "credential-file-value-42\u200b", "c": base64.StdEncoding.EncodeToString([]byte("x:operator-ai-key-0123"))}, nil
		}})
	srv2, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{leak}, &kernel.Options{Secrets: []string{"operator-ai-key-0123"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv2.AddSecrets("credential-file-value-42"); err != nil {
		t.Fatal(err)
	}
	wire := wireOf(mcptest.Connect(t, srv2, nil).Call(t, "leak", map[string]any{}))
	lacksSecret(t, "result", wire, "operator-ai-key-0123")
	lacksSecret(t, "result", wire, "credential-file-value-42")
}
