package observe

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/listen"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsPath is where ServeMetrics answers.
const MetricsPath = "/metrics"

// metricsHandler serves g's metrics in the Prometheus exposition formats.
func metricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return mux
}

// ServeMetrics serves g on addr until ctx ends. A bare port (":9090" or
// "9090") binds 127.0.0.1. ready, when not nil, gets the bound address.
func ServeMetrics(ctx context.Context, addr string, g prometheus.Gatherer, ready func(addr string)) error {
	ln, err := net.Listen("tcp", listen.Addr(addr))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: metricsHandler(g), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}
	if ready != nil {
		ready(ln.Addr().String())
	}
	return listen.Serve(ctx, srv, ln, 5*time.Second)
}
