package vdbapi

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

var jsonCT = map[string]string{"Content-Type": "application/json"}

func (f *fixture) authorize(t *testing.T) (code, user string) {
	t.Helper()
	r := send(t, "POST", f.SiteURL()+DevicePath+"/authorize", "", jsonCT, "{}")
	if r.status != 200 {
		t.Fatalf("authorize: %d %s", r.status, r.raw)
	}
	return r.str("device_code"), r.str("user_code")
}

func (f *fixture) poll(t *testing.T, code string) resp {
	t.Helper()
	return send(t, "POST", f.SiteURL()+DevicePath+"/token", "", jsonCT, `{"device_code":"`+code+`"}`)
}

// pollWant advances past the interval and expects status and error code.
func (f *fixture) pollWant(t *testing.T, code string, status int, errCode string) resp {
	t.Helper()
	f.clock.Advance(f.currentInterval(code))
	r := f.poll(t, code)
	if r.status != status || r.str("error") != errCode {
		t.Fatalf("poll: %d %s, want %d %q", r.status, r.raw, status, errCode)
	}
	return r
}

func (f *fixture) currentInterval(code string) time.Duration {
	for _, g := range f.DeviceGrants() {
		for _, is := range f.Issued() {
			if is.DeviceCode == code && is.UserCode == g.UserCode {
				return g.Interval
			}
		}
	}
	return 5 * time.Second
}

// Reference §8: /authorize returns every field, with a long device_code.
func TestDeviceAuthorize(t *testing.T) {
	f := start(t, &Options{DeviceExpiresIn: 10 * time.Minute, DeviceInterval: 1500 * time.Millisecond})
	r := send(t, "POST", f.SiteURL()+DevicePath+"/authorize", "", jsonCT, "{}")
	if r.status != 200 || len(r.str("device_code")) < 40 || r.str("user_code") == "" ||
		r.body["expires_in"].(float64) != 600 || r.body["interval"].(float64) != 2 {
		t.Fatalf("authorize: %s", r.raw)
	}
	if r.str("verification_uri") != f.SiteURL()+VerificationPath ||
		r.str("verification_uri_complete") != r.str("verification_uri")+"?code="+url.QueryEscape(r.str("user_code")) {
		t.Fatalf("uris: %s", r.raw)
	}
	code2, user2 := f.authorize(t)
	if code2 == r.str("device_code") || user2 == r.str("user_code") || f.LastUserCode() != user2 {
		t.Fatal("codes repeat")
	}
	if got := f.Issued(); len(got) != 2 || got[1].DeviceCode != code2 {
		t.Fatalf("Issued: %+v", got)
	}
	for _, tc := range []struct{ method, ct string }{{"GET", ""}, {"POST", "text/plain"}} {
		r := send(t, tc.method, f.SiteURL()+DevicePath+"/authorize", "", map[string]string{"Content-Type": tc.ct}, "")
		if r.status != 405 && r.status != 400 {
			t.Errorf("%s %s: %d", tc.method, tc.ct, r.status)
		}
	}
}

// Reference §11: more than 12 /authorize calls in 60 s get 429.
func TestDeviceAuthorizeRateLimit(t *testing.T) {
	f := start(t, nil)
	for range 12 {
		f.authorize(t)
	}
	if r := send(t, "POST", f.SiteURL()+DevicePath+"/authorize", "", jsonCT, "{}"); r.status != 429 {
		t.Fatalf("13th: %d", r.status)
	}
	f.clock.Advance(61 * time.Second)
	f.authorize(t)
}

// Pending, then approved; the key works against the API; single use.
func TestDeviceApproveAndSingleUse(t *testing.T) {
	f := start(t, nil)
	code, user := f.authorize(t)
	f.pollWant(t, code, 400, "authorization_pending")
	if err := f.ApproveDevice(user, f.key); err != nil {
		t.Fatal(err)
	}
	r := f.pollWant(t, code, 200, "")
	if r.str("orgId") != OrgA || r.str("apiKey") != f.key {
		t.Fatalf("approved: %s", r.raw)
	}
	if a := send(t, "GET", f.APIURL()+APIVersion+"/sources", "ApiKey "+r.str("apiKey"), nil, ""); a.status != 200 {
		t.Fatalf("the key does not work: %d", a.status)
	}
	f.pollWant(t, code, 400, "access_denied") // a redeemed code never works twice
	if g := f.DeviceGrants()[0]; g.State != GrantRedeemed || g.Polls != 3 {
		t.Fatalf("grant: %+v", g)
	}
	if err := f.ApproveDevice("NOPE-0000", f.key); err != ErrUnknownUserCode {
		t.Fatalf("unknown user code: %v", err)
	}
	if err := f.ApproveDevice(user, "org:unprovisioned"); err == nil {
		t.Fatal("approved with a key the API would refuse")
	}
}

func TestDeviceDeniedAndExpired(t *testing.T) {
	f := start(t, nil)
	code, user := f.authorize(t)
	if err := f.DenyDevice(user); err != nil {
		t.Fatal(err)
	}
	f.pollWant(t, code, 400, "access_denied")

	code, user = f.authorize(t)
	if err := f.ExpireDevice(user); err != nil {
		t.Fatal(err)
	}
	f.pollWant(t, code, 400, "expired_token")

	code, user = f.authorize(t)
	f.clock.Advance(5 * time.Minute)
	_ = f.ApproveDevice(user, f.key) // too late: the grant has expired
	if r := f.poll(t, code); r.status != 400 || r.str("error") != "expired_token" {
		t.Fatalf("past expires_in: %s", r.raw)
	}
	if r := f.poll(t, "never-issued-"+strings.Repeat("x", 40)); r.str("error") != "expired_token" {
		t.Fatalf("unknown code: %s", r.raw)
	}
	if r := send(t, "POST", f.SiteURL()+DevicePath+"/token", "", jsonCT, `{}`); r.status != 400 || r.str("error") != "invalid_request" {
		t.Fatalf("no device_code: %s", r.raw)
	}
}

// RFC 8628 §3.5: polling faster than the interval gets slow_down, and the
// interval grows by 5 s each time.
func TestDeviceIntervalEnforced(t *testing.T) {
	f := start(t, nil)
	code, user := f.authorize(t)
	if r := f.poll(t, code); r.str("error") != "slow_down" { // at once after /authorize
		t.Fatalf("immediate poll: %s", r.raw)
	}
	f.clock.Advance(9 * time.Second) // the interval is now 10 s
	if r := f.poll(t, code); r.str("error") != "slow_down" {
		t.Fatalf("9 s after a slow_down: %s", r.raw)
	}
	f.clock.Advance(15 * time.Second)
	if r := f.poll(t, code); r.str("error") != "authorization_pending" {
		t.Fatalf("after waiting the interval: %s", r.raw)
	}
	if g := f.DeviceGrants()[0]; g.Interval != 15*time.Second || g.UserCode != user {
		t.Fatalf("interval %v", g.Interval)
	}
	// Approval does not excuse a fast poll.
	_ = f.ApproveDevice(user, f.key)
	if r := f.poll(t, code); r.str("error") != "slow_down" {
		t.Fatalf("fast poll after approval: %s", r.raw)
	}
}

// Reference §11: scripted answers per grant (pending, slow_down, 429, 502).
func TestDeviceScript(t *testing.T) {
	f := start(t, nil)
	code, user := f.authorize(t)
	if err := f.ScriptDevice(user, StepPending, StepSlowDown, StepRateLimited, StepBadGateway); err != nil {
		t.Fatal(err)
	}
	f.pollWant(t, code, 400, "authorization_pending")
	f.pollWant(t, code, 400, "slow_down")
	f.pollWant(t, code, 429, "rate_limited")
	f.clock.Advance(time.Minute)
	if r := f.poll(t, code); r.status != 502 || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("502 step: %d %s", r.status, r.header)
	}
	_ = f.ApproveDevice(user, f.key)
	f.pollWant(t, code, 200, "")
}

// Only a signed-in browser approves: /approve without one is 401, and it
// is a trip-wire for bulwark.
func TestDeviceApproveEndpoint(t *testing.T) {
	f := start(t, &Options{TolerateTripWires: true})
	_, user := f.authorize(t)
	r := send(t, "POST", f.SiteURL()+DevicePath+"/approve", "", jsonCT, `{"user_code":"`+user+`"}`)
	if r.status != 401 {
		t.Fatalf("approve: %d", r.status)
	}
	if tw := f.TripWires(); len(tw) != 1 || tw[0].Host != HostSite {
		t.Fatalf("trip-wires: %+v", tw)
	}
	if g := f.DeviceGrants()[0]; g.State != GrantPending {
		t.Fatalf("state %s", g.State)
	}
}
