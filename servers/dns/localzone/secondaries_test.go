package localzone_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/realdns"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
)

const (
	secKey    = "bulwark-xfr."
	secSecret = "aDuN3MJK7Ptz0Q0lQbbBv2Dq0vQ2E+JtG0M8q3Xk1sE="
)

// lockedBuf collects a logger's lines from several goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hiddenPrimary is the local store with its responder as the hidden
// primary of the given secondaries, and an MCP session of its tools.
type hiddenPrimary struct {
	p    *localzone.Provider
	r    *localzone.Responder
	sess *mcptest.Session
	log  *lockedBuf
}

func startHiddenPrimary(t *testing.T, secs []localzone.Secondary, opts *localzone.Options) *hiddenPrimary {
	t.Helper()
	o := localzone.Options{DisableSync: true}
	if opts != nil {
		o = *opts
	}
	p, err := localzone.New(t.TempDir(), &o)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := tsig.Parse("hmac-sha256:" + secKey + ":" + secSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := localzone.CheckSecondaries(secs, ring); err != nil {
		t.Fatal(err)
	}
	h := &hiddenPrimary{p: p, log: &lockedBuf{}}
	h.r = localzone.NewResponder(p, &localzone.ResponderOptions{Secondaries: secs, Keys: ring,
		Logger: slog.New(slog.NewTextHandler(h.log, nil)), NotifyWait: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.r.ListenAndServe(ctx, "127.0.0.1:0") }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-h.r.Ready():
	case err := <-done:
		t.Fatal(err)
	}
	srv, err := dns.New(dns.Config{}, dns.Deps{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Info{Name: "bulwark-dns", Version: "test"}, srv.Tools(),
		&kernel.Options{Envelope: srv.Envelope(), Confirm: confirm.NewIssuer(nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	h.sess = mcptest.Connect(t, k, nil)
	return h
}

// ok calls a tool, fails the test on a tool error, and decodes the result.
func (h *hiddenPrimary) ok(t *testing.T, tool string, args map[string]any, out any) string {
	t.Helper()
	res := h.sess.Call(t, tool, args)
	if res.IsError {
		t.Fatalf("%s: %s", tool, mcptest.Text(res))
	}
	if out != nil {
		mcptest.Structured(t, res, out)
	}
	return mcptest.Text(res)
}

// digShort is what dig +short answers at addr.
func digShort(t *testing.T, addr, name, typ string) string {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	out, _ := exec.Command(realdns.Tool(t, "dig"), "+short", "+norec", "+time=1", "+tries=1", "@"+host, "-p", port, name, typ).CombinedOutput()
	return strings.TrimSpace(string(out))
}

// validatedThrough asks delv, through each secondary, for a record of the
// signed zone, with the DS get_zone shows as the trust anchor.
func (h *hiddenPrimary) validatedThrough(t *testing.T, servers ...*realdns.Server) {
	t.Helper()
	delv := realdns.Tool(t, "delv")
	res := h.sess.Call(t, "get_zone", map[string]any{"zone": "example.com"})
	var z struct{ Zone dns.Zone }
	mcptest.Structured(t, res, &z)
	if z.Zone.DNSSEC == nil {
		t.Fatalf("get_zone shows no DNSSEC: %s", mcptest.Text(res))
	}
	f := strings.Fields(z.Zone.DNSSEC.DS[0])
	anchors := t.TempDir() + "/anchors.conf"
	if err := os.WriteFile(anchors, []byte(fmt.Sprintf("trust-anchors { %s static-ds %s %s %s \"%s\"; };\n", f[0], f[4], f[5], f[6], f[7])), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		host, port, _ := strings.Cut(s.Addr, ":")
		for _, q := range []struct{ name, want string }{{"api.example.com", "; fully validated"}, {"nothere.example.com", "; negative response, fully validated"}} {
			out, _ := exec.Command(delv, "@"+host, "-p", port, "-a", anchors, "+root=example.com", "+tcp", q.name, "A").CombinedOutput()
			if !strings.Contains(string(out), q.want) {
				t.Errorf("delv %s through %s: want %q:\n%s", q.name, s.Kind, q.want, out)
			}
		}
	}
}

func secondaryAt(t *testing.T, port int) localzone.Secondary {
	return localzone.Secondary{Addr: netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", port)), Key: secKey}
}

// TestSecondariesBINDAndKnot: BIND and Knot take the local store's signed
// zone from bulwark as its hidden primary; a change made through a tool is
// served by both within 2 s of the NOTIFY, and validated by delv through
// either; a secondary without the TSIG key is REFUSED, and the refusal is
// logged.
func TestSecondariesBINDAndKnot(t *testing.T) {
	realdns.Named(t)
	realdns.Knotd(t)
	bindPort, knotPort := realdns.FreePort(t), realdns.FreePort(t)
	h := startHiddenPrimary(t, []localzone.Secondary{secondaryAt(t, bindPort), secondaryAt(t, knotPort)},
		&localzone.Options{DisableSync: true, DNSSEC: map[string]localzone.DNSSEC{"example.com": {Denial: localzone.DenialNSEC3}}})
	h.ok(t, "create_zone", map[string]any{"name": "example.com", "mode": "primary"}, nil)
	h.ok(t, "add_records", map[string]any{"zone": "example.com", "name": "www", "type": "A", "records": []any{map[string]any{"value": "198.51.100.1"}}}, nil)

	key := realdns.Key{Name: secKey, Algorithm: "hmac-sha256", Secret: secSecret}
	zone := []realdns.Zone{{Name: "example.com", Primary: h.r.Addr()}}
	bind := realdns.StartBIND(t, realdns.Config{Key: key, Zones: zone, Port: bindPort}, false)
	knot := realdns.StartKnot(t, realdns.Config{Key: key, Zones: zone, Port: knotPort}, false)
	for _, s := range []*realdns.Server{bind, knot} {
		if got := digShort(t, s.Addr, "www.example.com", "A"); got != "198.51.100.1" {
			t.Fatalf("%s answers %q after the first transfer", s.Kind, got)
		}
	}

	for i, v := range []string{"198.51.100.7", "198.51.100.8"} {
		h.ok(t, "add_records", map[string]any{"zone": "example.com", "name": "api", "type": "A", "records": []any{map[string]any{"value": v}}}, nil)
		changed := time.Now()
		for _, s := range []*realdns.Server{bind, knot} {
			for !strings.Contains(digShort(t, s.Addr, "api.example.com", "A"), v) {
				if time.Since(changed) > 2*time.Second {
					t.Fatalf("change %d: %s does not serve %s 2 s after the change\nbulwark:\n%s\n%s:\n%s", i, s.Kind, v, h.log.String(), s.Kind, s.Log())
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		t.Logf("change %d served by BIND and Knot after %v", i, time.Since(changed).Round(time.Millisecond))
	}
	if !strings.Contains(h.log.String(), "form=incremental") {
		t.Errorf("no secondary took an incremental transfer:\n%s", h.log.String())
	}
	h.validatedThrough(t, bind, knot)

	// A secondary without the key: refused, and the refusal logged.
	nokey := realdns.StartBIND(t, realdns.Config{Key: key, Zones: []realdns.Zone{{Name: "example.com", Primary: h.r.Addr(), NoKey: true}}}, true)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(nokey.Log(), "REFUSED") || !strings.Contains(h.log.String(), "not signed with the secondary's TSIG key") {
		if time.Now().After(deadline) {
			t.Fatalf("the keyless secondary was not refused\nbulwark:\n%s\nBIND:\n%s", h.log.String(), nokey.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := digShort(t, nokey.Addr, "www.example.com", "A"); got != "" {
		t.Fatalf("the keyless secondary serves %q", got)
	}
	if strings.Contains(h.log.String(), secSecret) {
		t.Fatal("the secret reached the log")
	}
}
