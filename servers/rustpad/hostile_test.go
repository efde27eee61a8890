package rustpad_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	fake "github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/servers/rustpad"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/session"
)

// The Rustpad server is hostile: every cap and deadline of the session,
// reached through the tools, ends in a clear tool error within its
// deadline, with the connection closed and no goroutine left behind.

// quickCfg is a config with short deadlines and caps changed by opts.
func quickCfg(opts func(o *session.Options)) rustpad.Config {
	o := testSession(true)
	if opts != nil {
		opts(&o)
	}
	return rustpad.Config{Session: o}
}

// within fails unless f ends within limit.
func within(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if d := time.Since(start); d > limit {
		t.Errorf("took %v, want at most %v", d, limit)
	}
}

func waitNoConnections(t *testing.T, f *fixture, pad string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); f.peer.Connections(pad) != 0; waitABit() {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections left open on pad %s", f.peer.Connections(pad), pad)
		}
	}
}

type hostileCase struct {
	name string
	h    fake.Hostile
	opts func(o *session.Options)
	want kernel.Code
	says string
}

// writeOnly are the faults whose effect depends on timing: a flood
// overflows the queue only while the session is not reading it, so a read
// or a write may fail (before sending: want; after: conflict, the outcome
// is unknown) or succeed. It must end in time and leave nothing behind.
var writeOnly = map[string]bool{"flood": true}

func hostileCases() []hostileCase {
	cases := []hostileCase{
		{"stall before identity", fake.Hostile{Stall: fake.StallBeforeIdentity}, nil, kernel.Timeout, "did not answer in time"},
		{"stall after identity", fake.Hostile{Stall: fake.StallAfterIdentity}, nil, kernel.Timeout, "did not answer in time"},
		{"chatter outlasts the handshake", fake.Hostile{Chatter: true}, nil, kernel.Timeout, "did not answer in time"},
		{"history later than the handshake deadline", fake.Hostile{BurstDelay: 700 * time.Millisecond}, nil, kernel.Timeout, "did not answer in time"},
		{"close mid-handshake", fake.Hostile{CloseAfterIdentity: true}, nil, kernel.UpstreamUnavailable, "closed the connection"},
		{"giant frame", fake.Hostile{GiantFrame: 64 << 10}, func(o *session.Options) { o.MaxFrameBytes = 32 << 10 }, kernel.UpstreamError, "more data"},
		{"queued bytes", fake.Hostile{GiantFrame: 64 << 10}, func(o *session.Options) { o.MaxQueueBytes = 32 << 10 }, kernel.UpstreamError, "more data"},
		{"flood", fake.Hostile{Flood: 200}, func(o *session.Options) { o.MaxQueue = 10 }, kernel.UpstreamError, "more data"},
	}
	for _, m := range fake.Malformations() {
		cases = append(cases, hostileCase{"malformed " + m.String(), fake.Hostile{Malformed: m}, nil, kernel.UpstreamError, "malformed message"})
	}
	return cases
}

// Every hostile handshake, through a read and a write tool.
func TestHostileHandshakes(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, setup{cfg: quickCfg(c.opts)})
			seed(t, f, "pad", "hello")
			f.noLeak(t)
			f.peer.SetHostile(c.h)
			if !writeOnly[c.name] {
				within(t, 900*time.Millisecond, func() {
					contains(t, f.fails(t, "get_document_info", map[string]any{"id": "pad"}, c.want), c.says)
				})
			}
			within(t, 900*time.Millisecond, func() {
				res := f.call(t, "append_to_document", map[string]any{"id": "pad", "text": "!"})
				if writeOnly[c.name] && (!res.IsError || hasCode(res, kernel.Conflict)) {
					return
				}
				contains(t, isError(t, res, c.want), c.says)
			})
			waitNoConnections(t, f, "pad")
			if got := f.peer.Text("pad"); got != "hello" && !writeOnly[c.name] {
				t.Fatalf("pad changed to %q", got)
			}
		})
	}
}

// A history that arrives late, but within the deadline, is waited for:
// the pad is never taken for empty (the never-edited-pad trap).
func TestLateHistoryIsNotAnEmptyPad(t *testing.T) {
	f := newFixture(t, setup{cfg: quickCfg(func(o *session.Options) { o.ReadTimeout = 3 * time.Second })})
	seed(t, f, "pad", "old text")
	f.peer.SetHostile(fake.Hostile{BurstDelay: 250 * time.Millisecond})
	var info infoResult
	f.ok(t, "get_document_info", map[string]any{"id": "pad"}, &info)
	if info.LengthCharacters != 8 {
		t.Fatalf("length %d", info.LengthCharacters)
	}
	f.fails(t, "create_document", map[string]any{"id": "pad", "text": "new"}, kernel.AlreadyExists)
	f.ok(t, "append_to_document", map[string]any{"id": "pad", "text": "!"}, nil)
	if got := f.peer.Text("pad"); got != "old text!" {
		t.Fatalf("pad %q", got)
	}
}

// A withheld echo: the outcome is unknown, and the tool says so.
func TestAckDeadline(t *testing.T) {
	for _, c := range []struct {
		name string
		opts func(o *session.Options)
	}{
		{"ack deadline", func(o *session.Options) { o.ReadTimeout = 2 * time.Second }},
		{"read deadline", func(o *session.Options) { o.AckTimeout = 2 * time.Second }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, setup{cfg: quickCfg(c.opts)})
			seed(t, f, "pad", "hello")
			f.noLeak(t)
			f.peer.SetHostile(fake.Hostile{WithholdEcho: true})
			within(t, 900*time.Millisecond, func() {
				text := f.fails(t, "append_to_document", map[string]any{"id": "pad", "text": "!"}, kernel.Conflict)
				contains(t, text, "may or may not have been applied", "get_document", "never repeat an append")
			})
			if got := f.peer.Text("pad"); got != "hello!" {
				t.Fatalf("pad %q (the peer applied it; the tool must not deny that)", got)
			}
			waitNoConnections(t, f, "pad")
		})
	}
}

// The document cap, inbound and outbound.
func TestDocumentCap(t *testing.T) {
	f := newFixture(t, setup{cfg: quickCfg(func(o *session.Options) { o.MaxDocument = 10 })})
	seed(t, f, "big", strings.Repeat("🎉", 11))
	f.noLeak(t)
	f.fails(t, "get_document_info", map[string]any{"id": "big"}, kernel.ResourceExhausted)
	f.fails(t, "get_document", map[string]any{"id": "big"}, kernel.ResourceExhausted)
	seed(t, f, "small", "123456789")
	text := f.fails(t, "append_to_document", map[string]any{"id": "small", "text": "ab"}, kernel.ResourceExhausted)
	contains(t, text, `Pad "small" holds 9 character(s); adding 2 would pass the limit of 10.`)
	f.ok(t, "append_to_document", map[string]any{"id": "small", "text": "a"}, nil)
	f.fails(t, "replace_in_document", map[string]any{"id": "small", "search": "1", "replace": "xy"}, kernel.ResourceExhausted)
	f.fails(t, "create_document", map[string]any{"id": "fresh", "text": strings.Repeat("x", 11)}, kernel.ResourceExhausted)
	if got := f.peer.Text("small"); got != "123456789a" {
		t.Fatalf("pad %q", got)
	}
	waitNoConnections(t, f, "small")
}

// The peer going away mid-session.
func TestPeerUnreachable(t *testing.T) {
	f := newFixture(t, setup{cfg: quickCfg(nil)})
	f.peer.Close()
	f.fails(t, "get_document_info", map[string]any{"id": "pad"}, kernel.UpstreamUnavailable)
	f.fails(t, "get_document", map[string]any{"id": "pad"}, kernel.UpstreamUnavailable)
	f.fails(t, "get_stats", nil, kernel.UpstreamUnavailable)
}

// apiFault answers the /api routes (not the socket) with fault.
func apiFault(route string, fault http.HandlerFunc) func(http.Handler) http.Handler {
	return func(peer http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/"+route) {
				fault(w, r)
				return
			}
			peer.ServeHTTP(w, r)
		})
	}
}

func TestHostileHTTP(t *testing.T) {
	long := strings.Repeat("upstream says ", 500)
	cases := []struct {
		name  string
		route string
		fault http.HandlerFunc
		tool  string
		want  kernel.Code
		says  []string
		never []string
	}{
		{"slow text", "text", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		}, "get_document", kernel.Timeout, []string{"did not answer in time"}, nil},
		{"html 502", "text", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html><body><h1>502</h1><p>" + injected + "</p></body></html>"))
		}, "get_document", kernel.UpstreamUnavailable, []string{"HTTP 502", "HTML error page from upstream (dropped)"}, []string{"<html", "ignore previous"}},
		{"long error body", "text", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(long))
		}, "get_document", kernel.UpstreamError, []string{"HTTP 500", "The upstream said:", "…"}, []string{long[:2100]}},
		{"404 from a proxy", "text", http.NotFound, "get_document", kernel.UpstreamError, []string{"a proxy in front of it may not forward /api"}, nil},
		{"redirect", "stats", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
		}, "get_stats", kernel.UpstreamError, []string{"redirect"}, []string{"127.0.0.1:1"}},
		{"oversized body", "text", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("x", 4*session.DefaultMaxDocument+8192)))
		}, "get_document", kernel.UpstreamError, []string{"larger than any pad"}, nil},
		{"stats not JSON", "stats", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(injected))
		}, "get_stats", kernel.UpstreamError, []string{"not in the expected form"}, []string{"ignore previous"}},
		{"stats negative", "stats", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"start_time":-1,"num_documents":1,"database_size":0}`))
		}, "get_stats", kernel.UpstreamError, []string{"start_time is not an unsigned integer"}, nil},
		{"invalid utf-8", "text", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("ok \xff\xfe"))
		}, "get_document", kernel.UpstreamError, []string{"invalid UTF-8"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := quickCfg(nil)
			cfg.HTTPTimeout = 300 * time.Millisecond
			f := newFixture(t, setup{cfg: cfg, proxy: apiFault(c.route, c.fault)})
			within(t, 2*time.Second, func() {
				args := map[string]any{"id": "pad"}
				if c.tool == "get_stats" {
					args = nil
				}
				text := f.fails(t, c.tool, args, c.want)
				contains(t, text, c.says...)
				lacks(t, text, c.never...)
			})
		})
	}
}

// The WebSocket says empty, the text route does not: writes fail closed.
func TestEmptyCrossCheckDisagrees(t *testing.T) {
	f := newFixture(t, setup{proxy: apiFault("text", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hidden text the socket did not show"))
	})})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_document", map[string]any{"id": "pad", "text": "x"}},
		{"append_to_document", map[string]any{"id": "pad", "text": "x"}},
		{"set_document", map[string]any{"id": "pad", "text": "x"}},
		{"get_document_info", map[string]any{"id": "pad"}},
	} {
		text := f.fails(t, c.tool, c.args, kernel.Conflict)
		contains(t, text, `Pad "pad" looked empty on its WebSocket, but Rustpad's text route returned 35 character(s)`)
		lacks(t, text, "hidden")
	}
	if _, rev := f.peer.State("pad"); rev != 0 {
		t.Fatal("a write happened")
	}
}
