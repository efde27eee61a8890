package observe_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/bulwarkmcp/bulwark/kernel/observe"
)

const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

// TestTraceSpanTree: a tools/call is one server span continuing the
// request's traceparent; each upstream attempt is a client span under it,
// and the upstream receives that span as its traceparent. Refusals at
// admission get a span too. No attribute holds an argument, key or
// principal.
func TestTraceSpanTree(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	obs, err := observe.New(&observe.Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, obs)
	h := map[string]string{"Traceparent": traceparent, "Tracestate": "vendor=opaque"}
	f.call(t, proKey, "lookup", map[string]any{"name": secretArg, "mode": "fail"}, h)
	sent := <-f.upstream
	f.call(t, freeKey, "pro_report", map[string]any{"name": secretArg}, h)
	f.call(t, proKey, "delete_item", map[string]any{"name": secretArg}, h)

	spans := rec.Ended()
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = s
		for _, kv := range s.Attributes() {
			for _, secret := range secrets {
				if strings.Contains(kv.Value.Emit(), secret) {
					t.Errorf("span %s: %s holds %q", s.Name(), kv.Key, secret)
				}
			}
		}
	}
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4 (call, upstream, tier refusal, confirmation): %v", len(spans), names(spans))
	}
	call, up := byName["tools/call lookup"], byName["GET"]
	if call == nil || up == nil {
		t.Fatalf("spans %v", names(spans))
	}
	if got := call.Parent(); got.TraceID().String() != clientTrace || got.SpanID().String() != clientSpan || !got.IsRemote() {
		t.Errorf("the call's parent is %v, want the request's traceparent", got)
	}
	if call.SpanKind() != trace.SpanKindServer || up.SpanKind() != trace.SpanKindClient {
		t.Errorf("kinds %v, %v", call.SpanKind(), up.SpanKind())
	}
	if up.Parent().SpanID() != call.SpanContext().SpanID() || up.SpanContext().TraceID().String() != clientTrace {
		t.Errorf("the upstream span is not the call's child")
	}
	if want := fmt.Sprintf("00-%s-%s-01", clientTrace, up.SpanContext().SpanID()); sent != want {
		t.Errorf("the upstream got traceparent %q, want the upstream span's %q", sent, want)
	}
	if got := call.SpanContext().TraceState().String(); got != "vendor=opaque" {
		t.Errorf("tracestate %q, want the request's", got)
	}
	wantAttrs(t, call, map[string]string{"gen_ai.tool.name": "lookup", "bulwark.outcome": "tool_error",
		"error.type": "not_found", "mcp.method.name": "tools/call", "bulwark.server": "t"})
	wantAttrs(t, up, map[string]string{"http.request.method": "GET", "http.response.status_code": "404"})
	tier := byName["tools/call pro_report"]
	if tier == nil {
		t.Fatalf("no span for the tier refusal: %v", names(spans))
	}
	wantAttrs(t, tier, map[string]string{"bulwark.outcome": "refused", "error.type": "permission_denied"})
	if tier.Parent().TraceID().String() != clientTrace {
		t.Errorf("the refusal's span does not continue the request's trace")
	}
	wantAttrs(t, byName["tools/call delete_item"], map[string]string{"bulwark.confirm": "issued", "error.type": "confirmation_required"})

	// Over the call limit, with a name the server never registered.
	f.exhaust(t)
	var limited sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "tools/call "+"other" {
			limited = s
		}
	}
	if limited == nil {
		t.Fatal("no span for the call refused by the limit")
	}
	wantAttrs(t, limited, map[string]string{"gen_ai.tool.name": "other", "bulwark.outcome": "rate_limited", "error.type": "rate_limited"})
}

func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	got := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		got[kv.Key] = kv.Value.Emit()
	}
	for k, v := range want {
		if got[attribute.Key(k)] != v {
			t.Errorf("span %s: %s = %q, want %q", s.Name(), k, got[attribute.Key(k)], v)
		}
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name())
	}
	return n
}

// TestTraceOTLPExport: with OTEL_EXPORTER_OTLP_ENDPOINT naming a local
// OTLP/HTTP receiver, TracingFromEnv's provider delivers the spans there,
// under OTEL_SERVICE_NAME.
func TestTraceOTLPExport(t *testing.T) {
	got := make(chan *collectortrace.ExportTraceServiceRequest, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(b, req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got <- req
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Write(out)
	}))
	defer receiver.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
	t.Setenv("OTEL_SERVICE_NAME", "bulwark-test")
	ctx := context.Background()
	tp, err := observe.TracingFromEnv(ctx, getenv, "bulwark")
	if err != nil || tp == nil {
		t.Fatalf("TracingFromEnv: %v, %v", tp, err)
	}
	obs, _ := observe.New(&observe.Options{TracerProvider: tp})
	f := newFixture(t, obs)
	f.call(t, proKey, "lookup", map[string]any{"name": secretArg, "mode": "ok"}, map[string]string{"Traceparent": traceparent})
	<-f.upstream
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tp.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	var spans []string
	var service string
	for len(got) > 0 {
		req := <-got
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				if kv.Key == "service.name" {
					service = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans = append(spans, fmt.Sprintf("%s %x", s.Name, s.TraceId))
					if strings.Contains(s.String(), secretArg) {
						t.Errorf("exported span %s holds the argument", s.Name)
					}
				}
			}
		}
	}
	want := []string{"GET " + clientTrace, "tools/call lookup " + clientTrace}
	if fmt.Sprint(spans) != fmt.Sprint(want) {
		t.Errorf("exported %v, want %v", spans, want)
	}
	if service != "bulwark-test" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", service)
	}
}

func getenv(k string) string { return lookupEnv(k) }
