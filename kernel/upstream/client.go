package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Defaults of Options.
const (
	defaultTimeout           = 30 * time.Second
	defaultMaxBodyBytes      = 8 << 20
	defaultMaxErrorBodyBytes = 64 << 10
	defaultUserAgent         = "bulwark"
)

// Options configure a Client. The zero value (or nil) is safe and useful.
type Options struct {
	// Timeout bounds one attempt: connecting, sending, waiting and reading
	// the body. 0 means 30 seconds (defaultTimeout).
	Timeout time.Duration
	// MaxBodyBytes caps a 2xx body; a longer one fails with
	// ErrResponseTooLarge. 0 means 8 MiB (defaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxErrorBodyBytes caps how much of a non-2xx body is read; the rest is
	// discarded and Response.Truncated set. 0 means 64 KiB (defaultMaxErrorBodyBytes).
	MaxErrorBodyBytes int64
	// Retry bounds retries; see RetryPolicy.
	Retry RetryPolicy
	// InsecureSkipVerify disables certificate verification on this client's
	// own transport only (never http.DefaultTransport). Dangerous: for a
	// self-hosted upstream with a self-signed certificate.
	InsecureSkipVerify bool
	// RootCAs replaces the system roots for this client (nil: system roots).
	RootCAs *x509.CertPool
	// UserAgent is sent unless the request sets one. "" means "bulwark".
	UserAgent string
	// DialContext, when set, replaces the transport's dialer: tests inside
	// a testing/synctest bubble connect to an in-memory fake with it (a
	// goroutine waiting on a loopback socket would stop the bubble's
	// clock). nil means a net.Dialer with a 30 s connect timeout.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// NoProxy connects directly, never through the proxy HTTPS_PROXY or
	// HTTP_PROXY names: for peers on the operator's own network (the
	// kernel forwarding an answer, with the client's credentials, to the
	// replica that holds its call).
	NoProxy bool
	// CheckURL, when set, is asked about every request's final URL just
	// before it is sent (see urlcheck.go); an error refuses the request,
	// wrapped in ErrURLRefused, and nothing is sent.
	CheckURL func(u *url.URL) error

	// Now, Sleep and Jitter are injected by tests. Jitter returns a duration
	// in [0, ceiling]. nil means the real clock, a context-aware timer and
	// uniform randomness.
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	Jitter func(ceiling time.Duration) time.Duration
}

// Client is the hardened outbound HTTP client. It is safe for concurrent use.
type Client struct {
	hc         *http.Client
	transport  *http.Transport
	timeout    time.Duration
	maxBody    int64
	maxErrBody int64
	retry      RetryPolicy
	userAgent  string
	checkURL   func(*url.URL) error
	now        func() time.Time
	sleep      func(context.Context, time.Duration) error
	jitter     func(time.Duration) time.Duration
}

// Request is one logical request; the client may send it more than once
// (see RetryPolicy), which is why the body is a byte slice.
type Request struct {
	// Method defaults to GET.
	Method string
	// URL is sent as is: its EscapedPath (honouring RawPath) goes on the wire.
	URL *url.URL
	// Header is sent as given, plus User-Agent and valid trace headers.
	Header http.Header
	// Body is sent with every attempt; nil sends none.
	Body []byte
	// Idempotent declares that repeating the request is harmless, so 502,
	// 503 and 504 are retried even though the method is not GET/HEAD/OPTIONS.
	Idempotent bool
}

func (r *Request) method() string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

// Response is the final answer to a Request, of any status.
type Response struct {
	StatusCode int
	Header     http.Header
	// Body is the whole 2xx body, or the first MaxErrorBodyBytes of another.
	Body []byte
	// Truncated reports a non-2xx body cut at MaxErrorBodyBytes.
	Truncated bool
	// Attempts is how many times the request was sent.
	Attempts int
}

// OK reports a 2xx status.
func (r *Response) OK() bool { return r.StatusCode >= 200 && r.StatusCode < 300 }

// New returns a Client with its own transport.
func New(opts *Options) *Client {
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Client{
		timeout:    positive(o.Timeout, defaultTimeout),
		maxBody:    positive(o.MaxBodyBytes, defaultMaxBodyBytes),
		maxErrBody: positive(o.MaxErrorBodyBytes, defaultMaxErrorBodyBytes),
		retry:      o.Retry.withDefaults(),
		userAgent:  o.UserAgent,
		checkURL:   o.CheckURL,
		now:        o.Now,
		sleep:      o.Sleep,
		jitter:     o.Jitter,
	}
	if c.userAgent == "" {
		c.userAgent = defaultUserAgent
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.sleep == nil {
		c.sleep = defaultSleep
	}
	if c.jitter == nil {
		c.jitter = fullJitter
	}
	c.transport = newTransport(&o)
	c.hc = &http.Client{Transport: c.transport, CheckRedirect: refuseRedirect}
	return c
}

func positive[T int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func newTransport(o *Options) *http.Transport {
	dial := o.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	proxy := http.ProxyFromEnvironment
	if o.NoProxy {
		proxy = nil
	}
	return &http.Transport{
		Proxy:                  proxy,
		DialContext:            dial,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           32,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		TLSClientConfig: &tls.Config{
			MinVersion:         tls.VersionTLS12,
			RootCAs:            o.RootCAs,
			InsecureSkipVerify: o.InsecureSkipVerify, //nolint:gosec // opt-in, scoped to this transport
		},
	}
}

// refuseRedirect stops at the first redirect, so the Authorization header is
// never replayed to the host a redirect names.
func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return fmt.Errorf("%w (status %d)", ErrRedirect, req.Response.StatusCode)
}

// CloseIdleConnections closes the transport's idle connections.
func (c *Client) CloseIdleConnections() { c.transport.CloseIdleConnections() }

// Do sends req, retrying as RetryPolicy allows, and returns the final
// response of any status. An error means no usable response: ErrTimeout,
// ErrRedirect, ErrResponseTooLarge, ErrTransport, ErrRequest, ErrURLRefused, or the
// context's own error; error texts carry neither headers nor the URL.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	if req == nil || req.URL == nil || !validMethod(req.method()) {
		return nil, fmt.Errorf("%w: missing url or bad method", ErrRequest)
	}
	if err := c.check(req.URL); err != nil {
		return nil, err
	}
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, req, attempt > 1)
		if err != nil {
			return nil, err
		}
		resp.Attempts = attempt
		d, again := c.nextWait(ctx, req, resp, attempt, waited)
		if !again {
			return resp, nil
		}
		if err := c.sleep(ctx, d); err != nil {
			return nil, fmt.Errorf("upstream: waiting to retry: %w", err)
		}
		waited += d
	}
}

func validMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !(c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return m != ""
}

// errAttemptTimeout is the cause of an attempt context that hit c.timeout.
var errAttemptTimeout = errors.New("upstream attempt timeout")

func (c *Client) attempt(ctx context.Context, req *Request, retry bool) (resp *Response, err error) {
	if o := observerFrom(ctx); o != nil {
		var done func(int, error)
		ctx, done = o.Attempt(ctx, req.method(), req.URL.Host, retry)
		defer func() { done(statusOf(resp), err) }()
	}
	actx, cancel := context.WithTimeoutCause(ctx, c.timeout, errAttemptTimeout)
	defer cancel()
	hreq, err := c.newHTTPRequest(actx, req)
	if err != nil {
		return nil, err
	}
	MeterFrom(ctx).addCall(retry, len(req.Body))
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, c.classify(ctx, actx, err)
	}
	defer hresp.Body.Close()
	resp = &Response{StatusCode: hresp.StatusCode, Header: hresp.Header}
	if err := c.readBody(ctx, actx, hresp, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

func (c *Client) newHTTPRequest(ctx context.Context, req *Request) (*http.Request, error) {
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method(), "", body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrRequest, "cannot build the request")
	}
	u := *req.URL
	hreq.URL = &u
	hreq.Host = ""
	hreq.Header = req.Header.Clone()
	if hreq.Header == nil {
		hreq.Header = http.Header{}
	}
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header.Set("User-Agent", c.userAgent)
	}
	hreq.Header.Del("Traceparent")
	hreq.Header.Del("Tracestate")
	if tp, ts := TraceFrom(ctx); tp != "" {
		hreq.Header.Set("Traceparent", tp)
		if ts != "" {
			hreq.Header.Set("Tracestate", ts)
		}
	}
	return hreq, nil
}

// classify maps an http.Client error to a sentinel, dropping *url.Error's
// URL from the text.
func (c *Client) classify(ctx, actx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("upstream: %w", ctxErr)
	}
	if errors.Is(context.Cause(actx), errAttemptTimeout) {
		return fmt.Errorf("%w after %s", ErrTimeout, c.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, ErrRedirect) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrTransport, err)
}

// readBody reads a 2xx body through the hard cap (overflow is an error) and
// an error body through the smaller error cap (overflow is cut off).
func (c *Client) readBody(ctx, actx context.Context, hresp *http.Response, resp *Response) error {
	limit := c.maxErrBody
	if resp.OK() {
		limit = c.maxBody
		if hresp.ContentLength > limit {
			return fmt.Errorf("%w: declared %d bytes, limit %d", ErrResponseTooLarge, hresp.ContentLength, limit)
		}
	}
	body, over, err := readCapped(hresp.Body, limit, !resp.OK())
	MeterFrom(ctx).addIn(len(body))
	if err != nil {
		return c.classify(ctx, actx, err)
	}
	if over {
		if resp.OK() {
			return fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, limit)
		}
		resp.Truncated = true
	}
	resp.Body = body
	return nil
}
