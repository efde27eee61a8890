package hetzner

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

func seeded(t *testing.T, opts *hetznerapi.Options) (*hetznerapi.Server, *Client) {
	t.Helper()
	fake, c := startFake(t, opts)
	if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	fake.ResetRequests()
	return fake, c
}

func TestRedirectNeverForwardsToken(t *testing.T) {
	sink := hetznerapi.StartSink(t)
	for _, status := range []int{301, 302, 307, 308} {
		fake, c := seeded(t, nil)
		fake.AddFault(hetznerapi.Fault{Kind: hetznerapi.FaultRedirect, Status: status, Location: sink.URL + "/v1/zones/example.com"})
		_, err := c.GetZone(t.Context(), "example.com")
		if !errors.Is(err, upstream.ErrRedirect) {
			t.Fatalf("%d: err = %v, want upstream.ErrRedirect", status, err)
		}
		noToken(t, err)
		_, err = c.DeleteZone(t.Context(), "example.com")
		if !errors.Is(err, upstream.ErrRedirect) {
			t.Fatalf("%d: delete err = %v", status, err)
		}
	}
	if sink.SawAuthorization() || len(sink.Requests()) != 0 {
		t.Fatalf("the redirect target got %d requests (authorization: %v)", len(sink.Requests()), sink.SawAuthorization())
	}
}

func TestHTMLErrorPageDropped(t *testing.T) {
	tests := []struct {
		name     string
		call     func(c *Client) error
		attempts int
	}{
		{"GET retried then reported", func(c *Client) error { _, err := c.GetZone(t.Context(), "example.com"); return err }, 4},
		{"POST not retried", func(c *Client) error { _, err := c.ChangeZoneTTL(t.Context(), "example.com", 600); return err }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, c := seeded(t, nil)
			fake.AddFault(hetznerapi.Fault{Kind: hetznerapi.FaultHTML})
			de := apiErr(t, tt.call(c), CodeUpstreamError, 502)
			if de.Message != upstream.HTMLDropped {
				t.Errorf("message %q, want the HTML dropped", de.Message)
			}
			if n := len(fake.Requests()); n != tt.attempts {
				t.Errorf("%d attempts, want %d", n, tt.attempts)
			}
		})
	}
}

func TestOversizedResponseCutOff(t *testing.T) {
	for _, declare := range []bool{false, true} {
		fake, _ := seeded(t, nil)
		fake.AddFault(hetznerapi.Fault{Kind: hetznerapi.FaultOversized, Size: 50 << 20, DeclareLength: declare})
		_, err := newClient(t, fake.URL(), StaticToken(testToken), nil).ListZones(t.Context(), dns.ListZonesOptions{})
		if !errors.Is(err, upstream.ErrResponseTooLarge) {
			t.Fatalf("default cap, declare=%v: err = %v, want ErrResponseTooLarge", declare, err)
		}
		noToken(t, err)
	}
	// Memory: with a 1 MiB cap, a 50 MiB answer costs a few MiB at most
	// (the read buffer grows to about twice the cap).
	fake, _ := seeded(t, nil)
	fake.AddFault(hetznerapi.Fault{Kind: hetznerapi.FaultOversized, Size: 50 << 20})
	c := newClient(t, fake.URL(), StaticToken(testToken), &upstream.Options{MaxBodyBytes: 1 << 20})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := c.ListZones(t.Context(), dns.ListZonesOptions{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, upstream.ErrResponseTooLarge) {
		t.Fatalf("err = %v, want ErrResponseTooLarge", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("allocated %d MiB for a 50 MiB answer with a 1 MiB cap", grew>>20)
	}
}

func TestSlowResponseTimesOut(t *testing.T) {
	fake, _ := seeded(t, nil)
	fake.AddFault(hetznerapi.Fault{Kind: hetznerapi.FaultSlow, Delay: 10 * time.Second})
	c := newClient(t, fake.URL(), StaticToken(testToken), &upstream.Options{Timeout: 100 * time.Millisecond, Sleep: noSleep})
	start := time.Now()
	_, err := c.GetZone(t.Context(), "example.com")
	if !errors.Is(err, upstream.ErrTimeout) {
		t.Fatalf("err = %v, want upstream.ErrTimeout", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("took %v with a 100ms timeout", el)
	}
	noToken(t, err)
}

func TestMalformedSuccess(t *testing.T) {
	for _, f := range []hetznerapi.Fault{
		{Kind: hetznerapi.FaultRaw, ContentType: "application/json", Body: `{"zone":`},
		{Kind: hetznerapi.FaultRaw, ContentType: "application/json", Body: `{}`},
		{Kind: hetznerapi.FaultRaw, ContentType: "text/html", Body: "<html>captive portal</html>"},
		{Kind: hetznerapi.FaultRaw, ContentType: "application/json", Body: `{"zone":{"id":"not a number"}}`},
	} {
		fake, c := seeded(t, nil)
		fake.AddFault(f)
		_, err := c.GetZone(t.Context(), "example.com")
		if !errors.Is(err, ErrMalformedResponse) {
			t.Fatalf("body %q: err = %v, want ErrMalformedResponse", f.Body, err)
		}
	}
}

func TestNonJSONErrorBodies(t *testing.T) {
	tests := []struct {
		fault hetznerapi.Fault
		want  string
	}{
		{hetznerapi.Fault{Kind: hetznerapi.FaultRaw, Status: 500, ContentType: "text/plain", Body: "upstream connect error"}, "upstream connect error"},
		{hetznerapi.Fault{Kind: hetznerapi.FaultRaw, Status: 500, ContentType: "application/json", Body: `{"error":{"code":"BAD CODE!","message":"x"}}`}, `{"error":{"code":"BAD CODE!","message":"x"}}`},
		{hetznerapi.Fault{Kind: hetznerapi.FaultRaw, Status: 403, ContentType: "application/json", Body: ""}, "Forbidden"},
		{hetznerapi.Fault{Kind: hetznerapi.FaultRaw, Status: 500, ContentType: "application/json", Body: "\n  <!DOCTYPE html>"}, upstream.HTMLDropped},
	}
	for _, tt := range tests {
		fake, c := seeded(t, nil)
		fake.AddFault(tt.fault)
		_, err := c.ChangeZoneTTL(t.Context(), "example.com", 600)
		de := apiErr(t, err, CodeUpstreamError, tt.fault.Status)
		if de.Message != tt.want {
			t.Errorf("message %q, want %q", de.Message, tt.want)
		}
	}
}

func TestRetries(t *testing.T) {
	now := time.Unix(1_760_000_000, 0)
	opts := func(attempts int) *upstream.Options {
		return &upstream.Options{Timeout: 5 * time.Second, Sleep: noSleep, Now: func() time.Time { return now }, Retry: upstream.RetryPolicy{MaxAttempts: attempts}}
	}
	t.Run("GET 429 retried", func(t *testing.T) {
		fake, _ := seeded(t, nil)
		c := newClient(t, fake.URL(), StaticToken(testToken), opts(0))
		fake.RateLimitNext(2, now.Add(5*time.Second))
		if _, err := c.GetZone(t.Context(), "example.com"); err != nil {
			t.Fatal(err)
		}
		if n := len(fake.Requests()); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})
	t.Run("POST 429 retried", func(t *testing.T) {
		fake, _ := seeded(t, nil)
		c := newClient(t, fake.URL(), StaticToken(testToken), opts(0))
		fake.RateLimitNext(1, now.Add(5*time.Second))
		if _, err := c.ChangeZoneTTL(t.Context(), "example.com", 600); err != nil {
			t.Fatal(err)
		}
		if z, _ := fake.Zone("example.com"); z.TTL != 600 || len(fake.Requests()) != 2 {
			t.Errorf("ttl %d after %d requests", z.TTL, len(fake.Requests()))
		}
	})
	t.Run("429 exhausted reports RetryAfter", func(t *testing.T) {
		fake, _ := seeded(t, nil)
		c := newClient(t, fake.URL(), StaticToken(testToken), opts(2))
		fake.RateLimitNext(5, now.Add(42*time.Second))
		_, err := c.GetZone(t.Context(), "example.com")
		de := apiErr(t, err, "rate_limit_exceeded", 429)
		if de.RetryAfter != 42*time.Second {
			t.Errorf("RetryAfter %v, want 42s", de.RetryAfter)
		}
	})
	for _, tc := range []struct {
		name     string
		call     func(c *Client) error
		attempts int
	}{
		{"GET 503 retried", func(c *Client) error { _, err := c.GetZone(t.Context(), "example.com"); return err }, 2},
		{"POST 502 after apply not retried", func(c *Client) error {
			_, err := c.AddRecords(t.Context(), "example.com", "www", "A", []dns.Record{{Value: "198.51.100.1"}}, nil)
			return err
		}, 1},
		{"PUT 503 not retried", func(c *Client) error { _, err := c.UpdateZone(t.Context(), "example.com", nil); return err }, 1},
		{"DELETE 504 not retried", func(c *Client) error { _, err := c.DeleteRRSet(t.Context(), "example.com", "@", "NS"); return err }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, _ := seeded(t, nil)
			c := newClient(t, fake.URL(), StaticToken(testToken), opts(0))
			fake.AddFault(hetznerapi.Fault{Kind: hetznerapi.FaultError, Code: "unavailable", Status: 503, Times: 1, AfterApply: true})
			err := tc.call(c)
			if n := len(fake.Requests()); n != tc.attempts {
				t.Errorf("%d requests, want %d (err %v)", n, tc.attempts, err)
			}
			if tc.attempts == 1 {
				apiErr(t, err, "unavailable", 503)
			}
		})
	}
}
