package vdb

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// purposeDeviceGrant is the HKDF info of device-grant handles (the
// security page's "device-grant").
const purposeDeviceGrant = "device-grant"

// Device-grant timing (reference §8): the fallbacks the CLI uses, the
// step slow_down adds, and the longest grant this server will hold.
const (
	defaultGrantTTL = 5 * time.Minute
	maxGrantTTL     = 15 * time.Minute
	defaultInterval = 5 * time.Second
	slowDownStep    = 5 * time.Second
	maxInterval     = time.Minute
	maxGrants       = 10_000
	// maxGrantsPerPrincipal is one principal's share of maxGrants: no
	// caller can fill the table and lock everyone else out of signing in.
	maxGrantsPerPrincipal = 32
	minDeviceCodeLen      = 16
)

// grantBody is what a handle seals: never shown to the client.
type grantBody struct {
	DeviceCode string `json:"dc"`
	Interval   int    `json:"iv"` // seconds
	Issued     int64  `json:"at"` // unix ms: no poll before Issued + Interval
}

// grantState is what the server remembers of a grant between polls.
type grantState struct {
	next      time.Time     // no /token call before this
	interval  time.Duration // the current interval
	done      bool          // redeemed, denied or expired: never polled again
	expires   time.Time
	principal string // who polls it, for the per-principal share
}

// grants remembers polled grants by the SHA-256 of their device code, until
// they expire: at most maxGrants in all, and maxGrantsPerPrincipal of one
// principal.
type grants struct {
	mu  sync.Mutex
	m   map[[32]byte]*grantState
	per map[string]int // live states per principal
	now func() time.Time
}

func newGrants(now func() time.Time) *grants {
	return &grants{m: map[[32]byte]*grantState{}, per: map[string]int{}, now: now}
}

// state returns the grant's state, creating it for principal. It refuses
// (resource_exhausted) a new state when the principal's share, or the
// table, is full of states that have not expired.
func (g *grants) state(principal, dc string, interval time.Duration, issued, expires time.Time) (*grantState, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := sha256.Sum256([]byte(dc))
	if st, ok := g.m[k]; ok {
		return st, nil
	}
	if len(g.m) >= maxGrants || g.per[principal] >= maxGrantsPerPrincipal {
		g.dropExpired()
	}
	hint := fmt.Sprintf("Pending sign-ins end within %d minutes; finish or abandon yours.", int(maxGrantTTL/time.Minute))
	switch {
	case g.per[principal] >= maxGrantsPerPrincipal:
		return nil, kernel.Errorf(kernel.ResourceExhausted, "You have %d sign-ins pending, the most one caller may have.", maxGrantsPerPrincipal).WithHint("%s", hint)
	case len(g.m) >= maxGrants:
		return nil, kernel.Errorf(kernel.ResourceExhausted, "Too many sign-ins are pending on this server.").WithHint("%s", hint)
	}
	st := &grantState{interval: interval, expires: expires, next: issued.Add(interval), principal: principal}
	g.m[k] = st
	g.per[principal]++
	return st, nil
}

// dropExpired forgets the states whose grants have expired.
func (g *grants) dropExpired() {
	now := g.now()
	for k, st := range g.m {
		if !now.Before(st.expires) {
			delete(g.m, k)
			if g.per[st.principal]--; g.per[st.principal] <= 0 {
				delete(g.per, st.principal)
			}
		}
	}
}

// grantBinding is what a grant handle is bound to besides its purpose: the
// principal, how it authenticated, the transport the call came over and
// the sign-in site the device code belongs to. A grant started over stdio
// (principal "local") therefore does not open on an HTTP server without
// authentication (also "local") that shares MCP_AEAD_KEY, and no server
// configured with another sign-in site sends the device code there.
func (s *Server) grantBinding(call *kernel.Call) string {
	transport := "http"
	if call.Header() == nil {
		transport = "stdio"
	}
	p := call.Principal
	return strings.Join([]string{"vdb-grant", transport, p.Scheme, s.site.String(), strconv.Itoa(len(p.ID)), p.ID}, "\x00")
}

type (
	authStartArgs struct{}
	authPollArgs  struct {
		Grant string `json:"grant" jsonschema:"the grant handle vdb_auth_start returned, unchanged"`
	}
	authLogoutArgs struct{}
)

// signIn is the policy of the two tools that mint and poll a code: they
// change state (a pending grant, a stored key) but destroy nothing.
var signIn = kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.No, Idempotent: kernel.No,
	OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open}

// signOut deletes this server's copy of the key (the key stays valid at
// Vulnetix until revoked there).
var signOut = kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.Yes, Idempotent: kernel.Yes,
	OpenWorld: kernel.No, Confirm: kernel.Never, Tier: kernel.Open}

func (s *Server) authTools() []kernel.Tool {
	poll := kernel.NewTool(kernel.Spec[authPollArgs, out]{Name: "vdb_auth_poll",
		Description: "Finish signing in: poll the grant from vdb_auth_start once the user has approved the code in the browser. " +
			"On success the key is stored for you on the server and never shown; the result says only signed_in.",
		Policy: signIn, Handle: bounded(s, s.authPoll)})
	return []kernel.Tool{
		kernel.NewTool(kernel.Spec[authStartArgs, out]{Name: "vdb_auth_start",
			Description: "Start signing in to Vulnetix (device grant): returns a link and a code for the user to approve in a browser, and a sealed grant handle for vdb_auth_poll. " +
				"The model cannot approve; a person must.",
			Policy: signIn, Handle: bounded(s, s.authStart)}),
		argschema.Refine(poll, map[string]argschema.Rule{"grant": argschema.All(argschema.MinLen(1), argschema.MaxLen(1024))}),
		kernel.NewTool(kernel.Spec[authLogoutArgs, out]{Name: "vdb_auth_logout",
			Description: "Sign out: delete the Vulnetix key a sign-in stored for you on this server.",
			Policy:      signOut, Handle: s.authLogout}),
	}
}

// siteURL is the device endpoint's URL.
func (s *Server) siteURL(endpoint string) *url.URL {
	u := *s.site
	u.Path = s.site.Path + "/api/site/v1/cli/device/" + endpoint
	u.RawPath = ""
	return &u
}

// checkSiteURL is the sign-in client's last check on every request
// (upstream.Options.CheckURL): only the two device endpoints a sign-in
// uses, authorize and token, on the sign-in site; never /approve.
func (s *Server) checkSiteURL(u *url.URL) error {
	for _, ep := range []string{"authorize", "token"} {
		if *u == *s.siteURL(ep) {
			return nil
		}
	}
	return errors.New("not a device endpoint of the sign-in site")
}

func (s *Server) sitePost(ctx context.Context, endpoint string, body any) (*upstream.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	resp, err := s.siteHTTP.Do(ctx, &upstream.Request{Method: http.MethodPost, URL: s.siteURL(endpoint), Body: b,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}})
	if err != nil {
		return nil, siteOrigin.transportError(err)
	}
	return resp, nil
}

func (s *Server) authStart(ctx context.Context, call *kernel.Call, _ authStartArgs) (out, error) {
	resp, err := s.sitePost(ctx, "authorize", struct{}{})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return nil, kernel.Errorf(kernel.RateLimited, "The Vulnetix sign-in site is refusing new sign-ins for now (rate limited).").WithHint("Wait a minute and start again.")
	}
	var a struct {
		DeviceCode              string `json:"device_code"`
		UserCode                string `json:"user_code"`
		VerificationURI         string `json:"verification_uri"`
		VerificationURIComplete string `json:"verification_uri_complete"`
		ExpiresIn               int    `json:"expires_in"`
		Interval                int    `json:"interval"`
	}
	if !resp.OK() || json.Unmarshal(resp.Body, &a) != nil || len(a.DeviceCode) < minDeviceCodeLen || a.UserCode == "" || a.VerificationURI == "" {
		return nil, kernel.Errorf(kernel.UpstreamError, "The Vulnetix sign-in site did not start a sign-in.")
	}
	if !s.onSite(a.VerificationURI) || (a.VerificationURIComplete != "" && !s.onSite(a.VerificationURIComplete)) {
		return nil, kernel.Errorf(kernel.UpstreamError, "The Vulnetix sign-in site sent an approval link to another host; it is not passed on.")
	}
	ttl := clampDuration(time.Duration(a.ExpiresIn)*time.Second, defaultGrantTTL, maxGrantTTL)
	iv := clampDuration(time.Duration(a.Interval)*time.Second, defaultInterval, maxInterval)
	body, _ := json.Marshal(grantBody{DeviceCode: a.DeviceCode, Interval: int(iv / time.Second), Issued: s.now().UnixMilli()})
	handle, err := s.sealer.SealFor(purposeDeviceGrant, s.grantBinding(call), body, ttl)
	if err != nil {
		return nil, err
	}
	res := out{"status": "pending", "userCode": cut(a.UserCode, 64), "verificationUri": a.VerificationURI,
		"expiresInSeconds": int(ttl / time.Second), "intervalSeconds": int(iv / time.Second), "grant": handle,
		"next": "Ask the user to open the link and approve the code, then call vdb_auth_poll with grant."}
	if a.VerificationURIComplete != "" {
		res["verificationUriComplete"] = a.VerificationURIComplete
	}
	return res, nil
}

// onSite reports whether link is an https (or, for a loopback site, http)
// URL on the sign-in site's host.
func (s *Server) onSite(link string) bool {
	u, err := url.Parse(link)
	return err == nil && u.User == nil && u.Host == s.site.Host && (u.Scheme == "https" || u.Scheme == s.site.Scheme)
}

func clampDuration(d, def, hi time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return min(d, hi)
}

// errGrant is the refusal of a handle that does not open.
func errGrant(err error) error {
	if errors.Is(err, seal.ErrExpired) {
		return kernel.Errorf(kernel.FailedPrecondition, "The sign-in grant has expired.").WithHint("Start again with vdb_auth_start.")
	}
	return kernel.Errorf(kernel.InvalidArgument, "The grant is not one this server issued to you: it was altered, sealed for another purpose, or issued to another caller.").
		WithHint("Pass the grant from your own vdb_auth_start unchanged, or start again.")
}

func (s *Server) authPoll(ctx context.Context, call *kernel.Call, in authPollArgs) (out, error) {
	b, err := s.sealer.OpenFor(purposeDeviceGrant, s.grantBinding(call), in.Grant)
	if err != nil {
		return nil, errGrant(err)
	}
	var g grantBody
	if json.Unmarshal(b, &g) != nil || g.DeviceCode == "" {
		return nil, errGrant(seal.ErrInvalid)
	}
	now := s.now()
	st, err := s.grants.state(call.Principal.ID, g.DeviceCode, time.Duration(g.Interval)*time.Second, time.UnixMilli(g.Issued), now.Add(maxGrantTTL))
	if err != nil {
		return nil, err
	}
	s.grants.mu.Lock()
	switch {
	case st.done:
		s.grants.mu.Unlock()
		return nil, kernel.Errorf(kernel.FailedPrecondition, "This grant has already been used or has ended.").WithHint("Start again with vdb_auth_start if you are not signed in.")
	case now.Before(st.next):
		wait := st.next.Sub(now)
		s.grants.mu.Unlock()
		return pending(wait), nil
	}
	st.next = now.Add(st.interval)
	s.grants.mu.Unlock()
	return s.redeem(ctx, call, g.DeviceCode, st)
}

func pending(wait time.Duration) out {
	secs := int((wait + time.Second - 1) / time.Second)
	return out{"status": "pending", "retryAfterSeconds": secs,
		"next": "The user has not approved the code yet. Call vdb_auth_poll again with the same grant after retryAfterSeconds."}
}

// redeem makes the one /token call of a poll.
func (s *Server) redeem(ctx context.Context, call *kernel.Call, dc string, st *grantState) (out, error) {
	resp, err := s.sitePost(ctx, "token", map[string]string{"device_code": dc})
	if err != nil {
		return nil, err
	}
	var body struct {
		Error  string `json:"error"`
		APIKey string `json:"apiKey"`
	}
	_ = json.Unmarshal(resp.Body, &body)
	s.grants.mu.Lock()
	defer s.grants.mu.Unlock()
	switch {
	case resp.StatusCode == http.StatusOK && body.APIKey != "":
		c, err := parseCredential("ApiKey " + body.APIKey)
		if err != nil {
			return nil, kernel.Errorf(kernel.UpstreamError, "The Vulnetix sign-in site returned a key this server cannot use.")
		}
		call.RegisterSecrets(c.secrets...)
		st.done = true
		if err := s.keys.Put(call.Principal.ID, body.APIKey); err != nil {
			return nil, err
		}
		return out{"status": "signed_in", "signOut": "Call vdb_auth_logout to delete the stored key from this server."}, nil
	case resp.StatusCode == http.StatusTooManyRequests || body.Error == "slow_down":
		st.interval = min(st.interval+slowDownStep, maxInterval)
		st.next = s.now().Add(st.interval)
		return pending(st.interval), nil
	case body.Error == "authorization_pending":
		return pending(st.interval), nil
	case body.Error == "access_denied":
		st.done = true
		return nil, kernel.Errorf(kernel.PermissionDenied, "The sign-in was denied.").WithHint("Start again with vdb_auth_start if that was a mistake.")
	case body.Error == "expired_token":
		st.done = true
		return nil, kernel.Errorf(kernel.FailedPrecondition, "The sign-in code expired before it was approved.").WithHint("Start again with vdb_auth_start.")
	}
	return nil, kernel.Errorf(kernel.UpstreamUnavailable, "The Vulnetix sign-in site did not answer usefully (HTTP %d).", resp.StatusCode).
		WithHint("Call vdb_auth_poll again after the interval.")
}

func (s *Server) authLogout(_ context.Context, call *kernel.Call, _ authLogoutArgs) (out, error) {
	existed, err := s.keys.Delete(call.Principal.ID)
	if err != nil {
		return nil, err
	}
	if !existed {
		return out{"status": "not_signed_in"}, nil
	}
	return out{"status": "signed_out"}, nil
}
