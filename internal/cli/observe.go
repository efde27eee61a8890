package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/listen"
	"github.com/bulwarkmcp/bulwark/kernel/observe"
)

// observing holds the observability settings: the metrics listener
// (-metrics) and the OpenTelemetry variables. Both are off by default.
type observing struct {
	metricsAddr string
	getenv      func(string) string
	registry    *prometheus.Registry
	tracer      *sdktrace.TracerProvider
}

func (o *observing) register(f *flags) {
	o.getenv = f.getenv
	f.String(&o.metricsAddr, "metrics", "BULWARK_METRICS", "", "serve Prometheus metrics at `ADDR`/metrics (a bare port binds 127.0.0.1); traces follow the OTEL_* variables")
}

// observer builds the kernel's observer from the settings, or nil when
// neither metrics nor traces are on.
func (o *observing) observer() (kernel.Observer, error) {
	opts := observe.Options{}
	if o.metricsAddr != "" {
		o.registry = prometheus.NewRegistry()
		o.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		opts.Registerer = o.registry
	}
	tp, err := observe.TracingFromEnv(context.Background(), o.getenv, "bulwark")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if tp != nil {
		o.tracer, opts.TracerProvider = tp, tp
	}
	if opts.Registerer == nil && opts.TracerProvider == nil {
		return nil, nil
	}
	obs, err := observe.New(&opts)
	if err != nil {
		return nil, err
	}
	return obs, nil
}

// start opens the metrics listener (an error now if it cannot listen) and
// returns the function that stops it and flushes the traces.
func (o *observing) start(ctx context.Context, logger *slog.Logger) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	if o.registry != nil {
		if !listen.Loopback(o.metricsAddr) {
			logger.Warn("the metrics listener is reachable beyond loopback: anyone who can connect reads the call counts", "addr", o.metricsAddr)
		}
		ready := make(chan string, 1)
		go func() { done <- observe.ServeMetrics(ctx, o.metricsAddr, o.registry, func(a string) { ready <- a }) }()
		select {
		case addr := <-ready:
			logger.Info("serving metrics", "addr", addr, "url", "http://"+addr+observe.MetricsPath)
		case err := <-done:
			cancel()
			return nil, fmt.Errorf("-metrics %s: %w", o.metricsAddr, err)
		}
	} else {
		done <- nil
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			logger.Warn("metrics listener", "error", err)
		}
		if o.tracer != nil {
			sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer scancel()
			if err := o.tracer.Shutdown(sctx); err != nil {
				logger.Warn("flushing traces", "error", err)
			}
		}
	}, nil
}
