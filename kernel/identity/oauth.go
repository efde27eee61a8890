package identity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	josejson "github.com/go-jose/go-jose/v4/json"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Defaults of OAuthOptions.
const (
	defaultPlanClaim     = "plan"
	defaultGroupsClaim   = "groups"
	maxGroups            = 256
	maxGroupBytes        = 256
	defaultOAuthPlan     = "free"
	defaultClockSkew     = 30 * time.Second
	maxClockSkew         = 5 * time.Minute
	defaultMaxTokenBytes = 8 << 10
)

// OAuthOptions configures OAuth. The zero value is usable.
type OAuthOptions struct {
	// AuthorizationServers are listed in the metadata (https URLs, http
	// only for loopback); nil means the issuer alone.
	AuthorizationServers []string
	// RequiredScopes must all be granted by a token; they are also named
	// in every challenge.
	RequiredScopes []string
	// ScopesSupported is listed in the metadata; nil means RequiredScopes.
	ScopesSupported []string
	// PlanClaim names the claim that holds the plan; empty means "plan".
	PlanClaim string
	// GroupsClaim names the claim that holds the caller's groups (an
	// array of strings, or one string); empty means "groups". A token
	// without it has no groups; one whose claim is malformed, or names more
	// than 256 groups or a group longer than 256 bytes, is refused: a
	// group cannot be dropped, since a policy may forbid by group.
	GroupsClaim string
	// DefaultPlan applies when a token has no plan claim; empty means
	// "free".
	DefaultPlan string
	// ClockSkew is the leeway on exp, nbf and iat; zero means
	// defaultClockSkew, and more than maxClockSkew is refused.
	ClockSkew time.Duration
	// MaxTokenBytes caps the token length; zero means 8 KiB.
	MaxTokenBytes int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// OAuth is an OAuth 2.1 resource server (MCP authorization; RFC 6750,
// 8707, 9068, 9728). It accepts only JWT access tokens signed with RS256,
// PS256, ES256 or EdDSA by a key in its JWKS, issued by exactly its
// issuer, for exactly its resource (no trailing-slash tolerance), unexpired,
// and granting every required scope. The principal ID is iss + "|" + sub:
// sub is unique only within its issuer, and the issuer prefix keeps OAuth
// IDs apart from API-key IDs (which cannot contain "|").
type OAuth struct {
	resource, issuer string
	keys             *JWKS
	servers          []string
	required         []string
	supported        []string
	planClaim        string
	groupsClaim      string
	defaultPlan      string
	skew             time.Duration
	maxToken         int
	now              func() time.Time
	metadataURL      string
}

// NewOAuth returns a resource server for resource (its canonical https
// URI, for example "https://mcp.example.com/mcp"), trusting tokens from
// issuer signed by keys. Invalid settings fail here, not on the first call.
func NewOAuth(resource, issuer string, keys *JWKS, opts *OAuthOptions) (*OAuth, error) {
	var o OAuthOptions
	if opts != nil {
		o = *opts
	}
	a := &OAuth{
		resource: resource, issuer: issuer, keys: keys,
		servers: o.AuthorizationServers, required: slices.Clone(o.RequiredScopes), supported: o.ScopesSupported,
		planClaim: cmp.Or(o.PlanClaim, defaultPlanClaim), groupsClaim: cmp.Or(o.GroupsClaim, defaultGroupsClaim), defaultPlan: cmp.Or(o.DefaultPlan, defaultOAuthPlan),
		skew: o.ClockSkew, maxToken: o.MaxTokenBytes, now: o.Now,
	}
	if err := a.setDefaults(); err != nil {
		return nil, fmt.Errorf("identity: oauth: %w", err)
	}
	return a, nil
}

func (a *OAuth) setDefaults() error {
	if a.keys == nil {
		return errors.New("no JWKS")
	}
	if a.issuer == "" {
		return errors.New("empty issuer")
	}
	murl, err := metadataURL(a.resource)
	if err != nil {
		return err
	}
	a.metadataURL = murl
	if a.servers == nil {
		a.servers = []string{a.issuer}
	}
	if len(a.servers) == 0 {
		return errors.New("metadata must list at least one authorization server")
	}
	for _, s := range a.servers {
		if _, err := checkFetchURL(s); err != nil {
			return fmt.Errorf("authorization server %q: %w", s, err)
		}
	}
	if a.supported == nil {
		a.supported = a.required
	}
	for _, s := range slices.Concat(a.required, a.supported) {
		if !validScope(s) || s == "offline_access" {
			return fmt.Errorf("scope %q is not a valid scope token or is offline_access", s)
		}
	}
	if !validPlan(a.defaultPlan) {
		return errors.New("default plan must be 1-64 characters of [A-Za-z0-9._-]")
	}
	switch {
	case a.skew == 0:
		a.skew = defaultClockSkew
	case a.skew < 0 || a.skew > maxClockSkew:
		return fmt.Errorf("clock skew %v outside 0..%v", a.skew, maxClockSkew)
	}
	if a.maxToken <= 0 {
		a.maxToken = defaultMaxTokenBytes
	}
	if a.now == nil {
		a.now = time.Now
	}
	return nil
}

// Authenticate implements Authenticator.
func (a *OAuth) Authenticate(r *http.Request) (Principal, error) {
	if tokenInQuery(r) {
		return Principal{}, a.refuse(errInvalidRequest, errTokenInQuery)
	}
	token, err := bearer(r.Header)
	switch {
	case errors.Is(err, errManyAuthHeaders):
		return Principal{}, a.refuse(errInvalidRequest, err)
	case errors.Is(err, errEmptyBearer):
		return Principal{}, a.refuse(errInvalidToken, err)
	case err != nil || token == "":
		return Principal{}, a.refuse(errNoCredentials, err)
	}
	p, err := a.verify(r.Context(), token)
	if err != nil {
		return Principal{}, err
	}
	return p, nil
}

// verify checks an access token and returns its principal, or an
// *authError (invalid_token, insufficient_scope, or keys unavailable).
func (a *OAuth) verify(ctx context.Context, token string) (Principal, error) {
	sig, err := parseJWS(token, a.maxToken)
	if err != nil {
		return Principal{}, a.refuse(errInvalidToken, err)
	}
	h := sig.Signatures[0].Protected
	key, err := a.keys.key(ctx, h.KeyID, h.Algorithm)
	if errors.Is(err, errKeysUnavailable) {
		return Principal{}, a.refuse(errKeysUnavailable, err)
	}
	if err != nil {
		return Principal{}, a.refuse(errInvalidToken, err)
	}
	payload, err := verifyJWS(sig, key)
	if err != nil {
		return Principal{}, a.refuse(errInvalidToken, err)
	}
	return a.checkClaims(payload)
}

// refuse builds the refusal with this server's challenge.
func (a *OAuth) refuse(kind, detail error) *authError {
	c := bearerChallenge{ResourceMetadata: a.metadataURL, Scope: a.required}
	switch kind {
	case errInvalidToken:
		c.Error = "invalid_token"
	case errInsufficientScope:
		c.Error = "insufficient_scope"
	case errInvalidRequest:
		c.Error = "invalid_request"
	case errKeysUnavailable:
		return refuse(kind, "", detail)
	}
	return refuse(kind, c.String(), detail)
}

// checkClaims validates the verified claims and builds the principal.
// go-jose's decoder refuses duplicate names, trailing data and claims of
// the wrong type, and matches names exactly (no case folding); go-jose's
// jwt.Claims checks iss, aud, exp, nbf and iat. Scope is checked last, so
// an expired token is 401, never 403.
func (a *OAuth) checkClaims(payload []byte) (Principal, error) {
	var c map[string]josejson.RawMessage
	var std jwt.Claims
	if josejson.Unmarshal(payload, &c) != nil || josejson.Unmarshal(payload, &std) != nil {
		return Principal{}, a.refuse(errInvalidToken, errors.New("claims are not a JSON object of well-formed registered claims"))
	}
	if err := a.checkRegistered(std); err != nil {
		return Principal{}, a.refuse(errInvalidToken, err)
	}
	if sub := std.Subject; sub == "" || len(sub) > 255 || hasControl(sub) {
		return Principal{}, a.refuse(errInvalidToken, errors.New("sub missing or malformed"))
	}
	plan, err := a.plan(c)
	if err != nil {
		return Principal{}, a.refuse(errInvalidToken, err)
	}
	granted, err := scopes(c)
	if err != nil {
		return Principal{}, a.refuse(errInvalidToken, err)
	}
	groups, err := a.groups(c)
	if err != nil {
		return Principal{}, a.refuse(errInvalidToken, err)
	}
	for _, s := range a.required {
		if !slices.Contains(granted, s) {
			return Principal{}, a.refuse(errInsufficientScope, fmt.Errorf("scope %q not granted", s))
		}
	}
	return Principal{ID: std.Issuer + "|" + std.Subject, Plan: plan, Scheme: schemeOAuth, Groups: groups, Scopes: granted}, nil
}

// groups reads the groups claim: an array of strings or one string, each
// a group name of 1-256 bytes without control characters, at most 256;
// sorted, duplicates removed. Absent means none.
func (a *OAuth) groups(c map[string]josejson.RawMessage) ([]string, error) {
	raw, ok := c[a.groupsClaim]
	if !ok {
		return nil, nil
	}
	var one string
	var list []string
	switch {
	case josejson.Unmarshal(raw, &one) == nil:
		list = []string{one}
	case josejson.Unmarshal(raw, &list) == nil:
	default:
		return nil, fmt.Errorf("claim %q is neither a string nor an array of strings", a.groupsClaim)
	}
	if len(list) > maxGroups {
		return nil, fmt.Errorf("claim %q names more than %d groups", a.groupsClaim, maxGroups)
	}
	for _, g := range list {
		if g == "" || len(g) > maxGroupBytes || hasControl(g) {
			return nil, fmt.Errorf("claim %q holds an empty, overlong or malformed group name", a.groupsClaim)
		}
	}
	slices.Sort(list)
	return slices.Compact(list), nil
}

// maxNumericDate bounds exp, nbf and iat (year 5138): a larger value is a
// malformed token, not one valid for millennia.
const maxNumericDate = 1e11

// checkRegistered requires iss to be exactly the issuer, aud (a string or
// an array of strings) to contain the resource exactly (RFC 8707, RFC 9068
// §4), and exp to be present; exp, nbf and iat are checked with the
// configured skew.
func (a *OAuth) checkRegistered(c jwt.Claims) error {
	for _, d := range []*jwt.NumericDate{c.Expiry, c.NotBefore, c.IssuedAt} {
		if d != nil && (*d < 0 || *d > maxNumericDate) {
			return errors.New("exp, nbf or iat is not a NumericDate")
		}
	}
	if c.Expiry == nil {
		return errors.New("exp missing")
	}
	want := jwt.Expected{Issuer: a.issuer, AnyAudience: jwt.Audience{a.resource}, Time: a.now()}
	return c.ValidateWithLeeway(want, a.skew)
}

// plan reads the plan claim, or returns the default plan when it is absent.
func (a *OAuth) plan(c map[string]josejson.RawMessage) (string, error) {
	raw, ok := c[a.planClaim]
	if !ok {
		return a.defaultPlan, nil
	}
	var plan string
	if josejson.Unmarshal(raw, &plan) != nil || !validPlan(plan) {
		return "", fmt.Errorf("claim %q is not a valid plan name", a.planClaim)
	}
	return plan, nil
}

// scopes returns the granted scopes: "scope" (a space-separated string,
// RFC 9068) and "scp" (an array of strings, or a string), combined.
func scopes(c map[string]josejson.RawMessage) ([]string, error) {
	var out []string
	if raw, ok := c["scope"]; ok {
		var s string
		if josejson.Unmarshal(raw, &s) != nil {
			return nil, errors.New("scope is not a string")
		}
		out = append(out, strings.Fields(s)...)
	}
	if raw, ok := c["scp"]; ok {
		var s string
		var list []string
		switch {
		case josejson.Unmarshal(raw, &s) == nil:
			out = append(out, strings.Fields(s)...)
		case josejson.Unmarshal(raw, &list) == nil:
			out = append(out, list...)
		default:
			return nil, errors.New("scp is neither a string nor an array of strings")
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// validScope reports whether s is an RFC 6749 scope-token.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
