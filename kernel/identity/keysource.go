package identity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Defaults of JWKSOptions.
const (
	defaultJWKSRefresh    = 15 * time.Minute
	defaultJWKSMinRefresh = time.Minute
	defaultJWKSTimeout    = 5 * time.Second
	defaultJWKSMaxStale   = 24 * time.Hour
)

// JWKSOptions configures a JWKS. The zero value is usable.
type JWKSOptions struct {
	// Refresh is how long a fetched set is used before it is fetched
	// again; zero means defaultJWKSRefresh.
	Refresh time.Duration
	// MinRefresh is the least time between two fetches, including the
	// early fetch a token with an unknown kid triggers (key rotation) and
	// retries after a failure; zero means defaultJWKSMinRefresh.
	MinRefresh time.Duration
	// MaxStale is how long the last good set keeps serving while fetches
	// fail; zero means defaultJWKSMaxStale.
	MaxStale time.Duration
	// Timeout bounds one fetch; zero means defaultJWKSTimeout.
	Timeout time.Duration
	// MaxBytes caps the document size; zero means 256 KiB.
	MaxBytes int64
	// HTTPClient fetches URLs; nil means a client that refuses redirects.
	// Its own Timeout, if shorter, also applies.
	HTTPClient *http.Client
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// JWKS is a source of verification keys: a file or an https URL, fetched
// with bounded size and time, cached, refreshed on an interval and early
// when a token names an unknown kid. It is safe for concurrent use.
type JWKS struct {
	fetch                         func(context.Context) (*keySet, error)
	refresh, minRefresh, maxStale time.Duration
	now                           func() time.Time

	fetchMu sync.Mutex // one fetch at a time
	mu      sync.Mutex // guards the fields below
	set     *keySet
	fetched time.Time // last success
	tried   time.Time // last attempt
	lastErr error
}

// NewJWKSFile returns a JWKS read from a file. The file is read once now,
// so that a missing or malformed file fails at startup, and re-read on the
// refresh interval.
func NewJWKSFile(path string, opts *JWKSOptions) (*JWKS, error) {
	j := newJWKS(opts)
	limit := j.maxBytes(opts)
	j.fetch = func(context.Context) (*keySet, error) { return readJWKSFile(path, limit) }
	if err := j.Refresh(context.Background()); err != nil {
		return nil, err
	}
	return j, nil
}

// NewJWKSURL returns a JWKS fetched from rawURL, which must be https (http
// only for a loopback host) without user information. Nothing is fetched
// until the first token arrives; call Refresh to check at startup.
func NewJWKSURL(rawURL string, opts *JWKSOptions) (*JWKS, error) {
	u, err := checkFetchURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: url: %w", errJWKS, err)
	}
	j := newJWKS(opts)
	client := noRedirectClient()
	if opts != nil && opts.HTTPClient != nil {
		client = opts.HTTPClient
	}
	timeout, limit := defaultJWKSTimeout, j.maxBytes(opts)
	if opts != nil && opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	j.fetch = func(ctx context.Context) (*keySet, error) {
		return fetchJWKS(ctx, client, u, timeout, limit)
	}
	return j, nil
}

// staticJWKS returns a JWKS that always serves set.
func staticJWKS(set *keySet) *JWKS {
	j := newJWKS(nil)
	j.fetch = func(context.Context) (*keySet, error) { return set, nil }
	j.set, j.fetched = set, time.Now()
	j.refresh = 1<<63 - 1
	return j
}

func newJWKS(opts *JWKSOptions) *JWKS {
	j := &JWKS{refresh: defaultJWKSRefresh, minRefresh: defaultJWKSMinRefresh, maxStale: defaultJWKSMaxStale, now: time.Now}
	if opts == nil {
		return j
	}
	if opts.Refresh > 0 {
		j.refresh = opts.Refresh
	}
	if opts.MinRefresh > 0 {
		j.minRefresh = opts.MinRefresh
	}
	if opts.MaxStale > 0 {
		j.maxStale = opts.MaxStale
	}
	if opts.Now != nil {
		j.now = opts.Now
	}
	return j
}

func (j *JWKS) maxBytes(opts *JWKSOptions) int64 {
	if opts != nil && opts.MaxBytes > 0 {
		return opts.MaxBytes
	}
	return defaultJWKSCap
}

// Refresh fetches the set now, whatever its age.
func (j *JWKS) Refresh(ctx context.Context) error {
	j.fetchMu.Lock()
	defer j.fetchMu.Unlock()
	return j.doFetch(ctx)
}

// doFetch fetches and records the outcome; fetchMu must be held.
func (j *JWKS) doFetch(ctx context.Context) error {
	set, err := j.fetch(ctx)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.tried = j.now()
	j.lastErr = err
	if err == nil {
		j.set, j.fetched = set, j.tried
	}
	return err
}

// key returns the key for a token's kid and alg, refreshing the set when
// it is old, or early (at most once per MinRefresh) when kid is unknown.
func (j *JWKS) key(ctx context.Context, kid, alg string) (any, error) {
	set, err := j.current(ctx, false)
	if err != nil {
		return nil, err
	}
	k, err := set.lookup(kid, alg)
	if !errors.Is(err, errUnknownKid) {
		return k, err
	}
	if set, err = j.current(ctx, true); err != nil {
		return nil, err
	}
	return set.lookup(kid, alg)
}

// current returns a usable set, fetching when it is due. A failed fetch
// leaves the last good set in service for up to MaxStale.
func (j *JWKS) current(ctx context.Context, unknownKid bool) (*keySet, error) {
	if set, due := j.state(unknownKid); !due {
		return j.usable(set)
	}
	j.fetchMu.Lock()
	defer j.fetchMu.Unlock()
	if set, due := j.state(unknownKid); !due { // another request fetched meanwhile
		return j.usable(set)
	}
	// The fetch outlives a caller that gives up (its own timeout bounds
	// it), so one impatient client cannot mark the issuer as failing.
	// The outcome is recorded; a failure may leave a stale set in service.
	j.doFetch(context.WithoutCancel(ctx))
	set, _ := j.state(false)
	return j.usable(set)
}

// usable returns set, or the last fetch error when there is no set.
func (j *JWKS) usable(set *keySet) (*keySet, error) {
	if set != nil {
		return set, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lastErr == nil {
		return nil, fmt.Errorf("%w: key set older than MaxStale", errKeysUnavailable)
	}
	return nil, fmt.Errorf("%w: %w", errKeysUnavailable, j.lastErr)
}

// state returns the cached set and whether a fetch is due now.
func (j *JWKS) state(unknownKid bool) (*keySet, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	canTry := j.tried.IsZero() || now.Sub(j.tried) >= j.minRefresh
	set := j.set
	if set != nil && now.Sub(j.fetched) >= j.maxStale {
		set = nil
	}
	switch {
	case set == nil:
		return nil, canTry // after a recent failure, do not hammer the issuer
	case unknownKid, now.Sub(j.fetched) >= j.refresh:
		return set, canTry
	}
	return set, false
}

func readJWKSFile(path string, limit int64) (*keySet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errJWKS, err)
	}
	defer f.Close()
	return readJWKS(f, limit)
}

func readJWKS(r io.Reader, limit int64) (*keySet, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading: %w", errJWKS, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: document larger than %d bytes", errJWKS, limit)
	}
	return parseJWKS(data)
}

func fetchJWKS(ctx context.Context, c *http.Client, u *url.URL, timeout time.Duration, limit int64) (*keySet, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errJWKS, err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: fetching %s: %w", errJWKS, u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: fetching %s: status %d", errJWKS, u.Redacted(), resp.StatusCode)
	}
	return readJWKS(resp.Body, limit)
}

func noRedirectClient() *http.Client {
	return &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirect refused") },
	}
}

// checkFetchURL accepts https URLs, and http URLs whose host is loopback.
func checkFetchURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	switch {
	case u.Host == "" || u.Opaque != "":
		return nil, errors.New("not an absolute URL")
	case u.User != nil:
		return nil, errors.New("user information is not allowed")
	case u.Fragment != "":
		return nil, errors.New("fragment is not allowed")
	case u.Scheme == "https":
		return u, nil
	case u.Scheme == "http" && upstream.IsLoopbackHost(u.Hostname()):
		return u, nil
	}
	return nil, errors.New("must be https (http only for loopback)")
}
