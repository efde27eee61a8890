package hetzner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// DefaultBaseURL is the Hetzner Cloud API.
const DefaultBaseURL = "https://api.hetzner.cloud/v1"

// DefaultHost is DefaultBaseURL's host; another host draws a warning.
const DefaultHost = "api.hetzner.cloud"

// maxTokenLen bounds a token; Hetzner tokens are 64 characters.
const maxTokenLen = 512

// Sentinel errors.
var (
	// ErrNoCredentials: the Credentials function failed or gave no token.
	ErrNoCredentials = errors.New("hetzner: no api token")
	// ErrBadToken: the token is not printable ASCII without spaces.
	ErrBadToken = errors.New("hetzner: malformed api token")
	// ErrMalformedResponse: a 2xx answer that is not the documented JSON.
	ErrMalformedResponse = fmt.Errorf("hetzner: malformed api response: %w", upstream.ErrMalformedResponse)
)

// Credentials returns the API token for the call ctx belongs to, or an error
// (the call then fails closed without contacting the API).
type Credentials func(ctx context.Context) (string, error)

// StaticToken returns Credentials that always give token (stdio mode, token
// read from the environment).
func StaticToken(token string) Credentials {
	return func(context.Context) (string, error) { return token, nil }
}

// Options configure a Client. nil or the zero value is fine.
type Options struct {
	// HTTP configures the outbound client: timeout, body caps, retries, TLS
	// roots, injected clock. nil means upstream's defaults (30 s, 8 MiB, 4
	// attempts within 30 s of waiting).
	HTTP *upstream.Options
}

// Client talks to the Hetzner Cloud DNS API. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	creds    Credentials
	http     *upstream.Client
	warnings []string
	now      func() time.Time
}

var _ dns.Provider = (*Client)(nil)

// New validates baseURL ("" means DefaultBaseURL) and returns a Client that
// asks creds for the token of every call.
func New(baseURL string, creds Credentials, opts *Options) (*Client, error) {
	if creds == nil {
		return nil, fmt.Errorf("%w: credentials function is nil", ErrNoCredentials)
	}
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	base, warnings, err := upstream.ValidateBaseURL(baseURL, DefaultHost)
	if err != nil {
		return nil, fmt.Errorf("hetzner: %w", err)
	}
	var httpOpts upstream.Options
	if opts != nil && opts.HTTP != nil {
		httpOpts = *opts.HTTP
	}
	now := httpOpts.Now
	if now == nil {
		now = time.Now
	}
	return &Client{base: base, creds: creds, http: upstream.New(&httpOpts), warnings: warnings, now: now}, nil
}

// Name is "hetzner".
func (c *Client) Name() string { return "hetzner" }

// Warnings are the base URL's warnings, for the operator at startup.
func (c *Client) Warnings() []string { return append([]string(nil), c.warnings...) }

// BaseURL is the validated base URL (no credentials are ever in it).
func (c *Client) BaseURL() string { return c.base.String() }

// call is one API request.
type call struct {
	op     string   // operation id, for error texts: "get_zone_rrset"
	method string   // GET when empty
	path   []string // validated segments after the base path
	query  url.Values
	body   any // a typed wire struct, or nil
	out    any // what a 2xx body decodes into
}

// do runs a call: token, request, retries (upstream), error mapping, decoding.
func (c *Client) do(ctx context.Context, k call) error {
	token, err := c.token(ctx)
	if err != nil {
		return fmt.Errorf("hetzner: %s: %w", k.op, err)
	}
	req, err := c.request(k, token)
	if err != nil {
		return fmt.Errorf("hetzner: %s: %w", k.op, err)
	}
	resp, err := c.http.Do(ctx, req)
	if err != nil {
		return fmt.Errorf("hetzner: %s: %w", k.op, err)
	}
	if !resp.OK() {
		return c.apiError(resp, token)
	}
	if k.out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Body, k.out); err != nil {
		return fmt.Errorf("hetzner: %s: %w", k.op, ErrMalformedResponse)
	}
	return nil
}

func (c *Client) token(ctx context.Context) (string, error) {
	token, err := c.creds(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoCredentials, err)
	}
	if token == "" {
		return "", ErrNoCredentials
	}
	if len(token) > maxTokenLen {
		return "", ErrBadToken
	}
	for i := 0; i < len(token); i++ {
		if token[i] <= ' ' || token[i] > '~' {
			return "", ErrBadToken
		}
	}
	return token, nil
}

func (c *Client) request(k call, token string) (*upstream.Request, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	h.Set("Accept", "application/json")
	req := &upstream.Request{Method: k.method, URL: c.url(k.path, k.query), Header: h}
	if k.body != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(k.body); err != nil {
			return nil, fmt.Errorf("encoding the request body: %w", err)
		}
		req.Body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		h.Set("Content-Type", "application/json")
	}
	return req, nil
}

// url joins validated segments to the base path verbatim: RawPath carries
// "@" and "*" as they are, so they are never percent-encoded on the wire.
func (c *Client) url(segs []string, q url.Values) *url.URL {
	p := "/" + strings.Join(segs, "/")
	u := *c.base
	u.Path = c.base.Path + p
	u.RawPath = c.base.EscapedPath() + p
	u.RawQuery = q.Encode()
	return &u
}
