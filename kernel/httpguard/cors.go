package httpguard

import (
	"fmt"
	"github.com/bulwarkmcp/bulwark/kernel/internal/httpsyntax"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// defaultCORSMaxAge is how long browsers may cache a preflight answer.
const defaultCORSMaxAge = 10 * time.Minute

// corsRequestHeaders are the request headers an MCP client needs; options
// add BYOK credential headers, and Mcp-Param-* headers are allowed as asked.
var corsRequestHeaders = []string{
	"Content-Type", "Accept", "Authorization",
	"Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Session-Id", "Last-Event-Id",
	"Traceparent", "Tracestate",
}

var corsExposedHeaders = []string{"Www-Authenticate", "Retry-After", "Mcp-Session-Id", "Mcp-Protocol-Version"}

// CORSOptions configures the Origin / CORS guard.
type CORSOptions struct {
	// Origins lists the browser origins allowed ("https://app.example.com",
	// scheme://host[:port], no path), or is exactly ["*"] for any origin.
	// Empty means no browser origin is allowed; requests without an Origin
	// (CLI clients, servers) are always allowed.
	Origins []string
	// AllowCredentials sends Access-Control-Allow-Credentials: true to
	// allowed origins. It cannot be combined with "*".
	AllowCredentials bool
	// ExtraHeaders are further request headers browsers may send, e.g. the
	// BYOK credential headers (CF-API-TOKEN, DD-API-KEY, ...).
	ExtraHeaders []string
	// ExtraExposedHeaders are further response headers scripts may read.
	ExtraExposedHeaders []string
	// MaxAge is the preflight cache lifetime; zero means defaultCORSMaxAge.
	MaxAge time.Duration
	// Logger, when set, records refused origins (quoted, truncated).
	Logger *slog.Logger
}

func (o *CORSOptions) wildcard() bool {
	return o != nil && len(o.Origins) == 1 && o.Origins[0] == "*"
}

// Validate reports configurations that must not start: "*" mixed with other
// origins or with AllowCredentials, the "null" origin, an origin with a
// path, query or fragment, a malformed header name, a negative MaxAge.
func (o *CORSOptions) Validate() error {
	if o == nil {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("cors: "+format+": %w", append(args, errInvalidConfig)...)
	}
	if o.wildcard() {
		if o.AllowCredentials {
			return bad(`origin "*" cannot be combined with credentials`)
		}
	} else {
		for _, origin := range o.Origins {
			if origin == "*" {
				return bad(`origin "*" must be the only entry`)
			}
			if _, err := canonicalOrigin(origin); err != nil {
				return bad("origin %q: %v", origin, err)
			}
		}
	}
	for _, h := range append(append([]string(nil), o.ExtraHeaders...), o.ExtraExposedHeaders...) {
		if !httpsyntax.IsToken(h) {
			return bad("header name %q", h)
		}
	}
	if o.MaxAge < 0 {
		return bad("negative MaxAge")
	}
	return nil
}

// WarnIfWildcardInProduction logs a warning when the origins are "*" and env
// (the deployment's environment name, e.g. BULWARK_ENV) is "production",
// as the HuGR kernel does at start-up; operators must acknowledge the risk
// or supply an allowlist. It reports whether it warned. A nil logger means
// slog.Default().
func (o *CORSOptions) WarnIfWildcardInProduction(env string, logger *slog.Logger) bool {
	if !o.wildcard() || !strings.EqualFold(strings.TrimSpace(env), "production") {
		return false
	}
	if logger == nil {
		logger = slog.Default()
	}
	logger.Warn(`httpguard: CORS origins are "*" in production: any web page may call this server from a browser; list the allowed origins instead`)
	return true
}

// corsGuard is the Origin guard: browser requests from an origin not on the list
// are refused with 403 cors_forbidden before authentication; preflights get
// 204 or 403. Requests without Origin pass. The zero value allows no browser
// origin.
type corsGuard struct {
	wildcard     bool
	origins      map[string]bool
	credentials  bool
	allowHeaders string
	exposed      []string // shared by every response; len == cap, so appends copy
	maxAge       string
	logger       *slog.Logger
}

// newCORS validates opts (which may be nil) and returns the guard.
func newCORS(opts *CORSOptions) (*corsGuard, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &CORSOptions{}
	}
	c := &corsGuard{wildcard: opts.wildcard(), credentials: opts.AllowCredentials, logger: opts.Logger, origins: map[string]bool{}}
	if !c.wildcard {
		for _, o := range opts.Origins {
			canon, _ := canonicalOrigin(o)
			c.origins[canon] = true
		}
	}
	c.allowHeaders = joinHeaders(corsRequestHeaders, opts.ExtraHeaders)
	c.exposed = []string{joinHeaders(corsExposedHeaders, opts.ExtraExposedHeaders)}
	maxAge := opts.MaxAge
	if maxAge == 0 {
		maxAge = defaultCORSMaxAge
	}
	c.maxAge = strconv.FormatInt(int64(maxAge/time.Second), 10)
	return c, nil
}

func joinHeaders(base, extra []string) string {
	all := append([]string(nil), base...)
	for _, h := range extra {
		all = append(all, http.CanonicalHeaderKey(h))
	}
	return strings.Join(all, ", ")
}

var varyOrigin = []string{"Origin"}

// addShared adds a header value from a shared one-element slice without
// allocating when the header is not yet set. The slice's len equals its cap,
// so a later Add copies instead of writing into it.
func addShared(h http.Header, key string, shared []string) {
	if _, ok := h[key]; ok {
		h[key] = append(h[key], shared...)
		return
	}
	h[key] = shared
}

// canonicalOrigin returns scheme://host[:port] lowercased, default ports
// dropped; anything with a path, query, fragment or user info is an error.
func canonicalOrigin(origin string) (string, error) {
	if origin == "null" {
		return "", fmt.Errorf(`the "null" origin is never allowed by name`)
	}
	u, err := url.Parse(origin)
	switch {
	case err != nil:
		return "", fmt.Errorf("unparsable")
	case u.Scheme == "" || u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("scheme and host are required")
	case u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.HasSuffix(origin, "#"):
		return "", fmt.Errorf("user info, path, query and fragment are not allowed")
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if port := u.Port(); scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host, nil
}

// Check applies the origin rule to a request: no Origin passes (unless
// Sec-Fetch-Site says it is a cross-site browser request); an Origin must be
// on the list. Errors wrap errOriginForbidden.
func (c *corsGuard) Check(r *http.Request) error {
	origins := r.Header.Values("Origin")
	wildcard := c != nil && c.wildcard
	switch {
	case len(origins) > 1:
		return fmt.Errorf("repeated Origin header: %w", errOriginForbidden)
	case len(origins) == 0:
		if site := r.Header.Get("Sec-Fetch-Site"); !wildcard && (site == "cross-site" || site == "same-site") {
			return fmt.Errorf("cross-site browser request without Origin: %w", errOriginForbidden)
		}
		return nil
	case wildcard:
		return nil
	}
	if c == nil {
		return errOriginForbidden
	}
	if c.origins[origins[0]] { // browsers send the canonical form: no parse needed
		return nil
	}
	canon, err := canonicalOrigin(origins[0])
	if err != nil || !c.origins[canon] {
		return errOriginForbidden
	}
	return nil
}

// Handler sets Vary: Origin (unless the origins are "*"), answers
// preflights (an OPTIONS request with an Origin) with 204 or 403, refuses
// disallowed browser requests with 403 cors_forbidden, and adds the
// Access-Control-* headers for allowed ones before calling next.
func (c *corsGuard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if c == nil || !c.wildcard {
			addShared(h, "Vary", varyOrigin)
		}
		preflight := r.Method == http.MethodOptions && r.Header.Get("Origin") != ""
		if preflight {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
		}
		if err := c.Check(r); err != nil {
			if c != nil && c.logger != nil {
				c.logger.Warn("httpguard: refused Origin", "origin", truncate(r.Header.Get("Origin"), 256))
			}
			writeCheckError(w, nil, err)
			return
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		c.allowOrigin(h, origin)
		if preflight {
			c.preflight(h, r)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h["Access-Control-Expose-Headers"] = c.exposed
		next.ServeHTTP(w, r)
	})
}

func (c *corsGuard) allowOrigin(h http.Header, origin string) {
	if c.wildcard {
		h.Set("Access-Control-Allow-Origin", "*")
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if c.credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}

func (c *corsGuard) preflight(h http.Header, r *http.Request) {
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", c.allowHeaders+paramHeaders(r.Header.Values("Access-Control-Request-Headers")))
	h.Set("Access-Control-Max-Age", c.maxAge)
}

// paramHeaders returns ", Mcp-Param-X" for each requested Mcp-Param-*
// header: their names come from tool schemas, so they cannot be listed
// ahead. Only well-formed names are echoed.
func paramHeaders(requested []string) string {
	var b strings.Builder
	for _, line := range requested {
		for _, name := range strings.Split(line, ",") {
			name = strings.TrimSpace(name)
			if len(name) > len("mcp-param-") && len(name) <= 128 &&
				strings.EqualFold(name[:len("mcp-param-")], "mcp-param-") && httpsyntax.IsToken(name) {
				b.WriteString(", ")
				b.WriteString(http.CanonicalHeaderKey(name))
			}
		}
	}
	return b.String()
}
