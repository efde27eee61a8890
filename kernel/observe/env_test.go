package observe_test

import (
	"context"
	"os"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/observe"
)

var lookupEnv = os.Getenv

// TestTracingFromEnvSwitch: tracing is off unless the OTEL variables turn it
// on, and an exporter other than otlp is an error at startup.
func TestTracingFromEnvSwitch(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
		err  bool
	}{
		{"nothing set", nil, false, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, true, false},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}, true, false},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, false, false},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, false, false},
		{"exporter zipkin", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := observe.TracingFromEnv(context.Background(), func(k string) string { return tc.env[k] }, "bulwark")
			if (err != nil) != tc.err || (tp != nil) != tc.on {
				t.Fatalf("provider %v, error %v; want on=%v error=%v", tp != nil, err, tc.on, tc.err)
			}
			if tp != nil {
				tp.Shutdown(context.Background())
			}
		})
	}
}
