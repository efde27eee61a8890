package observe

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// TracingFromEnv builds a tracer provider from the standard OpenTelemetry
// variables, or returns nil when tracing is off. It is on when
// OTEL_TRACES_EXPORTER is "otlp", or when it is unset and
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set;
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off. Spans go
// to the OTLP/HTTP exporter, which reads its own OTEL_EXPORTER_OTLP_*
// settings (endpoint, headers, timeout, compression, certificates) from the
// process environment; OTEL_SERVICE_NAME names the service (service when
// unset) and the SDK reads OTEL_RESOURCE_ATTRIBUTES and OTEL_TRACES_SAMPLER.
// The caller shuts the provider down, which flushes the spans.
func TracingFromEnv(ctx context.Context, getenv func(string) string, service string) (*sdktrace.TracerProvider, error) {
	on, err := tracingOn(getenv)
	if err != nil || !on {
		return nil, err
	}
	var opts []otlptracehttp.Option
	if u := tracesEndpoint(getenv); u != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	if name := getenv("OTEL_SERVICE_NAME"); name != "" {
		service = name
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

func tracingOn(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%.32q: only otlp (OTLP/HTTP) or none is supported", exp)
	}
}

// tracesEndpoint is the traces URL the variables name, read through
// getenv (so a caller's environment, not only the process's, decides):
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT
// with the signal path /v1/traces appended, as the OTLP exporter
// specification says.
func tracesEndpoint(getenv func(string) string) string {
	if u := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); u != "" {
		return u
	}
	if u := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); u != "" {
		return strings.TrimSuffix(u, "/") + "/v1/traces"
	}
	return ""
}
