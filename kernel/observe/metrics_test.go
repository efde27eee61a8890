package observe_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bulwarkmcp/bulwark/kernel/observe"
)

// TestMetricsScrape drives real calls and refusals through the HTTP server,
// scrapes the metrics listener, and checks the series — and that no
// argument value, key, principal id or unregistered tool name appears.
func TestMetricsScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	obs, err := observe.New(&observe.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, obs)
	f.traffic(t, nil)
	f.exhaust(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- observe.ServeMetrics(ctx, ":0", reg, func(a string) { addrc <- a }) }()
	addr := <-addrc
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("a bare port listened on %s, want loopback", addr)
	}
	body := scrape(t, addr)
	want := map[string]float64{
		`bulwark_tool_calls_total{outcome="ok",server="t",tool="lookup"}`:           1,
		`bulwark_tool_calls_total{outcome="tool_error",server="t",tool="lookup"}`:   2,
		`bulwark_tool_calls_total{outcome="refused",server="t",tool="delete_item"}`: 3,
		`bulwark_tool_calls_total{outcome="ok",server="t",tool="delete_item"}`:      1,
		`bulwark_tool_calls_total{outcome="refused",server="t",tool="pro_report"}`:  1,
		`bulwark_tool_calls_total{outcome="ok",server="t",tool="ping"}`:             callLimit,
		`bulwark_tool_calls_total{outcome="rate_limited",server="t",tool="other"}`:  1,
		`bulwark_tool_call_duration_seconds_count{server="t",tool="lookup"}`:        3,
		`bulwark_tool_call_duration_seconds_count{server="t",tool="delete_item"}`:   4,
		`bulwark_refusals_total{guard="auth",server="t"}`:                           1,
		`bulwark_refusals_total{guard="host",server="t"}`:                           1,
		`bulwark_refusals_total{guard="size",server="t"}`:                           1,
		`bulwark_refusals_total{guard="tier",server="t"}`:                           1,
		`bulwark_refusals_total{guard="limit",server="t"}`:                          1,
		`bulwark_refusals_total{guard="confirm",server="t"}`:                        3,
		`bulwark_rate_limited_total{scope="principal",server="t"}`:                  1,
		`bulwark_confirmations_total{event="issued",server="t"}`:                    2,
		`bulwark_confirmations_total{event="refused",server="t"}`:                   1,
		`bulwark_confirmations_total{event="redeemed",server="t"}`:                  1,
		`bulwark_upstream_requests_total{result="2xx",server="t"}`:                  1,
		`bulwark_upstream_requests_total{result="4xx",server="t"}`:                  1,
		`bulwark_upstream_requests_total{result="error",server="t"}`:                1,
		`bulwark_upstream_errors_total{kind="transport",server="t"}`:                1,
		`bulwark_upstream_request_duration_seconds_count{server="t"}`:               3,
		`bulwark_tool_calls_in_flight{server="t"}`:                                  0,
		`bulwark_http_requests_in_flight{server="t"}`:                               0,
	}
	for series, v := range want {
		got, ok := sample(body, series)
		if !ok {
			t.Errorf("no series %s", series)
			continue
		}
		if got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	// The flood guard, last: it refuses everything after.
	for range 300 {
		if status, _ := f.post(t, `{}`, nil); status == http.StatusTooManyRequests {
			break
		}
	}
	body = scrape(t, addr)
	for _, series := range []string{`bulwark_refusals_total{guard="flood",server="t"}`, `bulwark_rate_limited_total{scope="address",server="t"}`} {
		if got, _ := sample(body, series); got != 1 {
			t.Errorf("%s = %v, want 1", series, got)
		}
	}
	for _, s := range secrets {
		if strings.Contains(body, s) {
			t.Errorf("the scrape holds %q", s)
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("ServeMetrics: %v", err)
	}
}

func sample(body, series string) (float64, bool) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + observe.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestObservedEventStream: a call answered as text/event-stream (it asked
// for progress) streams through the observer's response recorder.
func TestObservedEventStream(t *testing.T) {
	obs, _ := observe.New(&observe.Options{Registerer: prometheus.NewRegistry()})
	f := newFixture(t, obs)
	status, body := f.post(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ping","arguments":{},"_meta":{"progressToken":"p1"}}}`,
		map[string]string{"Authorization": "Bearer " + proKey})
	if status != http.StatusOK || !strings.HasPrefix(body, "event: message") || !strings.Contains(body, `"id":3`) {
		t.Fatalf("status %d, body %q", status, body)
	}
}

// TestUnknownToolCountsNowhere: a call of a tool the server does not have,
// within the rate limit, is answered by the protocol layer and counted in
// no tool series (docs/operations.md); only a call refused by the rate
// limit before its name is looked up is counted, as "other".
func TestUnknownToolCountsNowhere(t *testing.T) {
	reg := prometheus.NewRegistry()
	obs, err := observe.New(&observe.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, obs)
	f.call(t, carolKey, unknownArg, map[string]any{}, nil)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "bulwark_tool_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetCounter().GetValue() != 0 {
				t.Errorf("an unknown tool's call was counted: %v", m)
			}
		}
	}
}
