package observe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

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
	ln, err := net.Listen("tcp", metricsAddr(addr))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: metricsHandler(g), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// metricsAddr is the address ServeMetrics listens on: the host defaults to
// 127.0.0.1, so metrics stay on loopback unless the operator names an
// interface.
func metricsAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return net.JoinHostPort("127.0.0.1", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// Loopback reports whether addr (after metricsAddr) binds only loopback.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(metricsAddr(addr))
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
