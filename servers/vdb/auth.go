package vdb

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	claim, err := s.grants.Poll(call.Principal.ID, g.DeviceCode, GrantPoll{Now: now, Issued: time.UnixMilli(g.Issued),
		Expires: now.Add(maxGrantTTL), Interval: time.Duration(g.Interval) * time.Second})
	switch {
	case err != nil:
		return nil, sharedStoreErr(call, err)
	case claim.Done:
		return nil, kernel.Errorf(kernel.FailedPrecondition, "This grant has already been used or has ended.").WithHint("Start again with vdb_auth_start if you are not signed in.")
	case claim.Wait > 0:
		return pending(claim.Wait), nil
	}
	return s.redeem(ctx, call, g.DeviceCode, claim.Interval)
}

// sharedStoreErr is err, or store_unavailable when the shared store failed.
func sharedStoreErr(call *kernel.Call, err error) error {
	if errors.Is(err, errSharedStore) {
		return call.StoreUnavailable(err)
	}
	return err
}

func pending(wait time.Duration) out {
	secs := int((wait + time.Second - 1) / time.Second)
	return out{"status": "pending", "retryAfterSeconds": secs,
		"next": "The user has not approved the code yet. Call vdb_auth_poll again with the same grant after retryAfterSeconds."}
}

// redeem makes the one /token call of a poll; interval is the grant's.
func (s *Server) redeem(ctx context.Context, call *kernel.Call, dc string, interval time.Duration) (out, error) {
	resp, err := s.sitePost(ctx, "token", map[string]string{"device_code": dc})
	if err != nil {
		return nil, err
	}
	var body struct {
		Error  string `json:"error"`
		APIKey string `json:"apiKey"`
	}
	_ = json.Unmarshal(resp.Body, &body)
	end := func(e error) (out, error) {
		if err := s.grants.End(call.Principal.ID, dc); err != nil {
			return nil, sharedStoreErr(call, err)
		}
		return nil, e
	}
	switch {
	case resp.StatusCode == http.StatusOK && body.APIKey != "":
		c, err := parseCredential("ApiKey " + body.APIKey)
		if err != nil {
			return nil, kernel.Errorf(kernel.UpstreamError, "The Vulnetix sign-in site returned a key this server cannot use.")
		}
		call.RegisterSecrets(c.secrets...)
		if _, err := end(nil); err != nil {
			return nil, err
		}
		if err := s.keys.Put(call.Principal.ID, body.APIKey); err != nil {
			return nil, sharedStoreErr(call, err)
		}
		return out{"status": "signed_in", "signOut": "Call vdb_auth_logout to delete the stored key from this server."}, nil
	case resp.StatusCode == http.StatusTooManyRequests || body.Error == "slow_down":
		iv, err := s.grants.SlowDown(call.Principal.ID, dc, s.now())
		if err != nil {
			return nil, sharedStoreErr(call, err)
		}
		return pending(iv), nil
	case body.Error == "authorization_pending":
		return pending(interval), nil
	case body.Error == "access_denied":
		return end(kernel.Errorf(kernel.PermissionDenied, "The sign-in was denied.").WithHint("Start again with vdb_auth_start if that was a mistake."))
	case body.Error == "expired_token":
		return end(kernel.Errorf(kernel.FailedPrecondition, "The sign-in code expired before it was approved.").WithHint("Start again with vdb_auth_start."))
	}
	return nil, kernel.Errorf(kernel.UpstreamUnavailable, "The Vulnetix sign-in site did not answer usefully (HTTP %d).", resp.StatusCode).
		WithHint("Call vdb_auth_poll again after the interval.")
}

func (s *Server) authLogout(_ context.Context, call *kernel.Call, _ authLogoutArgs) (out, error) {
	existed, err := s.keys.Delete(call.Principal.ID)
	if err != nil {
		return nil, sharedStoreErr(call, err)
	}
	if !existed {
		return out{"status": "not_signed_in"}, nil
	}
	return out{"status": "signed_out"}, nil
}
