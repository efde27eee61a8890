package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
)

// TestMetricsFlag: -metrics with a bare port serves the metrics on
// loopback; a call through the binary is counted with its upstream
// request, beside the Go runtime's metrics, and the token is nowhere.
func TestMetricsFlag(t *testing.T) {
	api := hetznerapi.Start(t, nil)
	if _, err := api.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HETZNER_API_TOKEN": api.Token(), "HETZNER_API_BASE_URL": api.URL()}
	cs, _, stderr := session(t, vars, "-metrics", "0")
	call(t, cs, "list_zones", map[string]any{})
	addr := waitFor(t, stderr, "serving metrics")
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("-metrics 0 listens on %q, want loopback", addr)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	for _, want := range []string{
		`bulwark_tool_calls_total{outcome="ok",server="bulwark-dns",tool="list_zones"} 1`,
		`bulwark_upstream_requests_total{result="2xx",server="bulwark-dns"} 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in the scrape", want)
		}
	}
	if strings.Contains(body, api.Token()) {
		t.Error("the scrape holds the token")
	}
	if strings.Contains(stderr.String(), "beyond loopback") {
		t.Error("a loopback listener was warned about")
	}
}

// TestMetricsBeyondLoopbackWarns: a non-loopback metrics address is
// allowed, and logged as reachable from elsewhere.
func TestMetricsBeyondLoopbackWarns(t *testing.T) {
	var o observing
	o.getenv = func(string) string { return "" }
	o.metricsAddr = "0.0.0.0:0"
	if _, err := o.observer(); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	stop, err := o.start(context.Background(), newTestLogger(&log))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if !strings.Contains(log.String(), "beyond loopback") {
		t.Errorf("no warning: %s", log.String())
	}
}

// TestObservingOffByDefault: without -metrics or OTEL variables the kernel
// gets no observer at all (nothing added to the call path), and an
// unsupported OTEL_TRACES_EXPORTER stops startup.
func TestObservingOffByDefault(t *testing.T) {
	o := observing{getenv: func(string) string { return "" }}
	if obs, err := o.observer(); obs != nil || err != nil {
		t.Fatalf("observer %v, error %v; want none", obs, err)
	}
	o.getenv = func(k string) string { return map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}[k] }
	if _, err := o.observer(); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER") {
		t.Fatalf("error %v, want one naming OTEL_TRACES_EXPORTER", err)
	}
}

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
