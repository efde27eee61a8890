package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

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
		`process_cpu_seconds_total `,
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

// TestTracesFlushedOnExit: with OTEL_EXPORTER_OTLP_ENDPOINT naming a local
// OTLP/HTTP receiver, a call's span reaches it under OTEL_SERVICE_NAME by
// the time the server has stopped.
func TestTracesFlushedOnExit(t *testing.T) {
	got := make(chan *collectortrace.ExportTraceServiceRequest, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, req) != nil {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		got <- req
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(receiver.Close)
	t.Cleanup(func() { // runs after the session's own cleanup has stopped the server
		var names []string
		var service string
		for len(got) > 0 {
			for _, rs := range (<-got).ResourceSpans {
				for _, kv := range rs.Resource.Attributes {
					if kv.Key == "service.name" {
						service = kv.Value.GetStringValue()
					}
				}
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						names = append(names, s.Name)
					}
				}
			}
		}
		if !slices.Contains(names, "tools/call create_zone") || service != "dns-test" {
			t.Errorf("exported spans %v of service %q", names, service)
		}
	})
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.URL, "OTEL_SERVICE_NAME": "dns-test"}
	cs, _, _ := session(t, vars, "-data-dir", t.TempDir(), "-dns-listen", "off")
	call(t, cs, "create_zone", map[string]any{"name": "example.com", "mode": "primary"})
}
